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
  const visibleUser = (user: UserModel | null) => (user && owns(user.userId) ? user : null);
  const visibleOrder = (order: OrderModel | null) => (order && owns(order.userId) ? order : null);

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
    async user(userId: string): Promise<UserModel | null> {
      requireViewer();
      return owns(userId) ? loaders.user(userId) : null;
    },
    async userByEmail(email: string): Promise<UserModel | null> {
      requireViewer();
      return visibleUser(await loaders.userByEmail.load(email));
    },
    async order(orderId: string): Promise<OrderModel | null> {
      requireViewer();
      return visibleOrder(await loaders.order(orderId));
    },
    product: (productId: string) => loaders.product(productId),
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
    async node(type: NodeModel['kind'], id: string): Promise<NodeModel | null> {
      switch (type) {
        case 'Product':
          return loaders.product(id);
        case 'User':
          return this.user(id);
        case 'Order':
          return this.order(id);
      }
    },
  };
}
