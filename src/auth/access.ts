/**
 * Authorization, in one place: every read of a user or an order goes through here, whichever
 * path asked for it (`user`, `userByEmail`, `order`, `node`, `nodes`, `viewer`, `Order.user`).
 *
 * Rules: the product catalog is public; a customer sees only their own profile and orders;
 * an admin sees everything. Another user's data is indistinguishable from missing data: the
 * answer is null, exactly as for an id that does not exist. Reading user data without a token
 * is UNAUTHENTICATED; a customer attempting an admin action is FORBIDDEN.
 */
import { mapped } from '../db/continuation.js';
import type { Continuation } from '../db/continuation.js';
import type { Loaders } from '../db/loaders.js';
import type { SchemaGate } from '../db/schemaGate.js';
import { ForbiddenError, UnauthenticatedError } from '../errors.js';
import { unreachable } from '../table/entities/entity.js';
import { identityOf } from '../table/entities/nodes.js';
import type { NodeKind, NodeOf } from '../table/entities/nodes.js';
import type { ItemModel } from '../table/entities/registry.js';
import type { ItemKey } from '../table/keys.js';
import { PRODUCT_RATING } from '../table/entities/review.js';
import type { NodeModel, OrderModel, ProductModel, ProductRatingModel, UserModel } from '../table/models.js';
import type { Viewer } from './tokens.js';

/** A node to read: its kind and raw id. */
export interface NodeRef {
  kind: NodeKind;
  id: string;
}

/** A product's rating to read (public, as the catalog is), by the product's id. */
export interface RatingRef {
  kind: 'ProductRating';
  id: string;
}

/** A point read of a level: a node, or a product's rating. */
export type ItemRef = NodeRef | RatingRef;

const isRating = (ref: ItemRef): ref is RatingRef => ref.kind === 'ProductRating';

/**
 * The access rules of one execution, for its viewer. One object with its rules as methods: an
 * execution that never reads a user or an order pays for nothing more (no closure per rule).
 */
export class Access {
  readonly #viewer: Viewer | null;
  readonly #loaders: Loaders;
  /**
   * Whether the answer depends on who asks: any look at the viewer counts (HTTP caching marks
   * only answers that never looked public). The response cache's dependency record will carry it.
   */
  #consultedViewer = false;

  constructor(viewer: Viewer | null, loaders: Loaders) {
    this.#viewer = viewer;
    this.#loaders = loaders;
  }

  get viewer(): Viewer | null {
    this.#consultedViewer = true;
    return this.#viewer;
  }

  /** True once anything in this execution depended on the viewer (their data, or whether there is one). */
  readViewerData(): boolean {
    return this.#consultedViewer;
  }

  requireViewer(): Viewer {
    this.#consultedViewer = true;
    if (!this.#viewer) throw new UnauthenticatedError('Sign in: this needs an Authorization: Bearer <token> header');
    return this.#viewer;
  }

  /** May the viewer see (and act on) data owned by `userId`? */
  owns(userId: string): boolean {
    this.#consultedViewer = true;
    const viewer = this.#viewer;
    return viewer !== null && (viewer.role === 'admin' || viewer.userId === userId);
  }

  /**
   * Whether a node of `kind` with raw id `id` may be read at all, by `node`'s rules before the
   * read: throws UNAUTHENTICATED where the rule needs a viewer and there is none.
   */
  #mayRead(kind: NodeKind, id: string): boolean {
    const rule = identityOf(kind).visibility;
    switch (rule.kind) {
      case 'public':
        return true;
      case 'owner':
        this.requireViewer();
        return !rule.ownerOfId || this.owns(rule.ownerOfId(id));
      case 'admin':
        return this.requireViewer().role === 'admin';
      default:
        return unreachable(rule);
    }
  }

  /** `found` (read some other way) if the viewer may see it. */
  #visible<M extends NodeModel>(found: M | null): M | null {
    if (!found) return null;
    const rule = identityOf(found.kind).visibility;
    switch (rule.kind) {
      case 'public':
        return found;
      case 'owner':
        return this.owns(rule.ownerOf(found)) ? found : null;
      case 'admin':
        return this.requireViewer().role === 'admin' ? found : null;
      default:
        return unreachable(rule);
    }
  }

  requireAdmin(action: string): Viewer {
    const signedIn = this.requireViewer();
    if (signedIn.role !== 'admin') throw new ForbiddenError(`Only an admin may ${action}`);
    return signedIn;
  }

  /**
   * Whose profile createUser makes: the token's subject, always, for a customer (naming
   * another userId is FORBIDDEN: nobody squats a future user's id); an admin may name any
   * userId. Anonymous callers are UNAUTHENTICATED.
   */
  profileOwner(requested: string | null | undefined): { userId: string; verifiedEmail: string | undefined } {
    const signedIn = this.requireViewer();
    if (requested == null || requested === signedIn.userId) {
      return { userId: signedIn.userId, verifiedEmail: signedIn.verifiedEmail };
    }
    if (signedIn.role !== 'admin') throw new ForbiddenError('Only an admin may create a profile for another userId');
    return { userId: requested, verifiedEmail: undefined };
  }

  /** For mutations that name a user: a customer may act only as themselves. */
  requireSelfOrAdmin(userId: string, action: string): Viewer {
    const signedIn = this.requireViewer();
    if (!this.owns(userId)) throw new ForbiddenError(`You may ${action} only for yourself`);
    return signedIn;
  }

  /**
   * A node of `kind` with raw id `id`, under its declaration's visibility: a public one as it
   * is; an owned one for its owner or an admin (UNAUTHENTICATED without a viewer, and another
   * user's reads as null, like a missing one; where the id names the owner, another user's is
   * not even read); an admin one for admins alone. Applies the same rules to whatever node a
   * global id names.
   */
  async node<K extends NodeKind>(kind: K, id: string): Promise<NodeOf<K> | null> {
    if (!this.#mayRead(kind, id)) return null;
    return this.#visible(await this.#loaders.node(kind, id));
  }

  /** Another user's id is not even looked up: no read, no timing difference worth having. */
  user(userId: string): Promise<UserModel | null> {
    return this.node('User', userId);
  }

  async userByEmail(email: string): Promise<UserModel | null> {
    this.requireViewer();
    return this.#visible(await this.#loaders.userByEmail.load(email));
  }

  order(orderId: string): Promise<OrderModel | null> {
    return this.node('Order', orderId);
  }

  product(productId: string): Promise<ProductModel | null> {
    return this.node('Product', productId);
  }

  /**
   * Before a read of every order of the shop (GSI2): admins only, a customer gets FORBIDDEN
   * without a read; then MIGRATION_PENDING while the table lacks the index (`schema`).
   */
  mayListShopOrders(schema?: SchemaGate): void {
    const signedIn = this.requireViewer();
    if (signedIn.role !== 'admin') throw new ForbiddenError('Only an admin may list the orders of the whole shop');
    schema?.assertMigrated('Query.orders');
  }

  /**
   * `node` for a round of reads at once (the planned executor's), and products' ratings beside
   * the nodes (public; null before the product's first review): the same rules, one read of the
   * items not read yet for all of them, and the values handed to `then` (now when all are
   * known). Throws UNAUTHENTICATED where `node` rejects with it.
   */
  items<R>(refs: readonly ItemRef[], then: Continuation<(NodeModel | ProductRatingModel | null)[], R>): R | Promise<R> {
    const keys: ItemKey[] = [];
    const readable = refs.map((ref) => {
      const read = isRating(ref) || this.#mayRead(ref.kind, ref.id);
      if (read)
        keys.push(isRating(ref) ? PRODUCT_RATING.keyOf({ productId: ref.id }) : identityOf(ref.kind).keyOf(ref.id));
      return read;
    });
    // The items loader reads any kind of item; only one of the kind asked for is a node here.
    const shown = (found: readonly (ItemModel | null)[]): (NodeModel | ProductRatingModel | null)[] => {
      let next = 0;
      return refs.map((ref, index) => {
        if (!readable[index]) return null;
        const item = found[next++] ?? null;
        if (item?.kind !== ref.kind) return null;
        return item.kind === 'ProductRating' ? item : this.#visible(item);
      });
    };
    return this.#loaders.items.readAll(keys, mapped(then, shown));
  }

  /** `userByEmail` for a round of reads at once (the planned executor's). */
  usersByEmail<R>(emails: readonly string[], then: Continuation<(UserModel | null)[], R>): R | Promise<R> {
    this.requireViewer();
    return this.#loaders.userByEmail.readAll(
      emails,
      mapped(then, (found: (UserModel | null)[]) => found.map((user) => this.#visible(user))),
    );
  }
}
