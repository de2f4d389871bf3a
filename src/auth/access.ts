/**
 * Authorization, in one place: every read of a user or an order goes through here, whichever
 * path asked for it (`user`, `userByEmail`, `order`, `node`, `nodes`, `viewer`, `Order.user`).
 *
 * Rules: the product catalog is public; a customer sees only their own profile and orders;
 * an admin sees everything. Another user's data is indistinguishable from missing data: the
 * answer is null, exactly as for an id that does not exist. Reading user data without a token
 * is UNAUTHENTICATED; a customer attempting an admin action is FORBIDDEN.
 */
import type { Loaders, ShopOrdersPageKey } from '../db/loaders.js';
import type { Page } from '../db/pagination.js';
import type { SchemaGate } from '../db/schemaGate.js';
import { ForbiddenError, UnauthenticatedError } from '../errors.js';
import { unreachable } from '../table/entities/entity.js';
import { identityOf } from '../table/entities/nodes.js';
import type { NodeKind, NodeOf } from '../table/entities/nodes.js';
import type { NodeModel, OrderModel, UserModel } from '../table/models.js';
import type { Viewer } from './tokens.js';

export type Access = ReturnType<typeof createAccess>;

export function createAccess(viewer: Viewer | null, loaders: Loaders) {
  // Whether the answer depends on who asks: any look at the viewer counts (HTTP caching marks
  // only answers that never looked public). The response cache's dependency record will carry it.
  let consultedViewer = false;
  const requireViewer = (): Viewer => {
    consultedViewer = true;
    if (!viewer) throw new UnauthenticatedError('Sign in: this needs an Authorization: Bearer <token> header');
    return viewer;
  };
  /** May the viewer see (and act on) data owned by `userId`? */
  const owns = (userId: string): boolean => {
    consultedViewer = true;
    return viewer !== null && (viewer.role === 'admin' || viewer.userId === userId);
  };
  /**
   * A node of `kind` with raw id `id`, under its declaration's visibility: a public one as it
   * is; an owned one for its owner or an admin (UNAUTHENTICATED without a viewer, and another
   * user's reads as null, like a missing one; where the id names the owner, another user's is
   * not even read); an admin one for admins alone.
   */
  async function node<K extends NodeKind>(kind: K, id: string): Promise<NodeOf<K> | null> {
    const rule = identityOf(kind).visibility;
    switch (rule.kind) {
      case 'public':
        return loaders.node(kind, id);
      case 'owner': {
        requireViewer();
        if (rule.ownerOfId && !owns(rule.ownerOfId(id))) return null;
        const found = await loaders.node(kind, id);
        return found && owns(rule.ownerOf(found)) ? found : null;
      }
      case 'admin':
        return requireViewer().role === 'admin' ? loaders.node(kind, id) : null;
      default:
        return unreachable(rule);
    }
  }
  /** `found` (read some other way) if the viewer may see it. */
  const visible = <M extends NodeModel>(found: M | null): M | null => {
    if (!found) return null;
    const rule = identityOf(found.kind).visibility;
    switch (rule.kind) {
      case 'public':
        return found;
      case 'owner':
        return owns(rule.ownerOf(found)) ? found : null;
      case 'admin':
        return requireViewer().role === 'admin' ? found : null;
      default:
        return unreachable(rule);
    }
  };

  return {
    get viewer(): Viewer | null {
      consultedViewer = true;
      return viewer;
    },
    /** True once anything in this execution depended on the viewer (their data, or whether there is one). */
    readViewerData: (): boolean => consultedViewer,
    requireViewer,
    owns,
    requireAdmin(action: string): Viewer {
      const signedIn = requireViewer();
      if (signedIn.role !== 'admin') throw new ForbiddenError(`Only an admin may ${action}`);
      return signedIn;
    },
    /**
     * Whose profile createUser makes: the token's subject, always, for a customer (naming
     * another userId is FORBIDDEN: nobody squats a future user's id); an admin may name any
     * userId. Anonymous callers are UNAUTHENTICATED.
     */
    profileOwner(requested: string | null | undefined): { userId: string; verifiedEmail: string | undefined } {
      const signedIn = requireViewer();
      if (requested == null || requested === signedIn.userId) {
        return { userId: signedIn.userId, verifiedEmail: signedIn.verifiedEmail };
      }
      if (signedIn.role !== 'admin') throw new ForbiddenError('Only an admin may create a profile for another userId');
      return { userId: requested, verifiedEmail: undefined };
    },
    /** For mutations that name a user: a customer may act only as themselves. */
    requireSelfOrAdmin(userId: string, action: string): Viewer {
      const signedIn = requireViewer();
      if (!owns(userId)) throw new ForbiddenError(`You may ${action} only for yourself`);
      return signedIn;
    },
    /** Another user's id is not even looked up: no read, no timing difference worth having. */
    user: (userId: string): Promise<UserModel | null> => node('User', userId),
    async userByEmail(email: string): Promise<UserModel | null> {
      requireViewer();
      return visible(await loaders.userByEmail.load(email));
    },
    order: (orderId: string): Promise<OrderModel | null> => node('Order', orderId),
    product: (productId: string) => node('Product', productId),
    /**
     * Every order of the shop (GSI2): admins only; a customer gets FORBIDDEN without a read.
     * Then MIGRATION_PENDING while the table lacks the index (`schema`).
     */
    async shopOrders(key: ShopOrdersPageKey, schema?: SchemaGate): Promise<Page<OrderModel>> {
      const signedIn = requireViewer();
      if (signedIn.role !== 'admin') throw new ForbiddenError('Only an admin may list the orders of the whole shop');
      schema?.assertMigrated('Query.orders');
      return loaders.shopOrdersPages.load(key);
    },
    /** Applies the same rules to whatever node a global id names. */
    node,
  };
}
