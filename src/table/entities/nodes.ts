/**
 * The nodes of the API (Relay's `Node`): for each, the item a look-up by id reads, the raw id
 * its global id encodes, and who may see it. Keyed by the node models' `kind`, so a model added
 * to NodeModel without an identity here fails the typecheck; global ids, `node()`, the loaders'
 * priming and the access rules all read this one map.
 */
import type { NodeModel } from '../models.js';
import type { Entity } from './entity.js';
import { ORDER } from './order.js';
import { PRODUCT } from './product.js';
import { REVIEW } from './review.js';
import type { ItemKey } from './template.js';
import { USER } from './user.js';

export type NodeKind = NodeModel['kind'];
export type NodeOf<K extends NodeKind> = Extract<NodeModel, { kind: K }>;

/** Who may see a node (the entity's visibility, with what the rule needs to decide). */
export type NodeVisibility<M> =
  | { readonly kind: 'public' }
  | {
      readonly kind: 'owner';
      /** The user who owns it. */
      ownerOf(model: M): string;
      /** The owner, when the id itself names them: decided before anything is read. */
      ownerOfId?(id: string): string;
    }
  | { readonly kind: 'admin' };

export interface NodeIdentity<M> {
  /** The item a look-up by id reads. */
  readonly entity: Entity<string, object, object, M>;
  /** The raw id in the model: what its global id encodes. */
  idOf(model: M): string;
  /** The key of the item of raw id `id` (InvalidKeyError for a bad id). */
  keyOf(id: string): ItemKey;
  readonly visibility: NodeVisibility<M>;
}

/** Every node kind, declared once; the type makes a missing kind a compile error. */
export type NodeRegistry<N extends { kind: string } = NodeModel> = {
  readonly [K in N['kind']]: NodeIdentity<Extract<N, { kind: K }>>;
};

export const NODES: NodeRegistry = {
  User: {
    entity: USER,
    idOf: (user) => user.userId,
    keyOf: (userId) => USER.keyOf({ userId }),
    visibility: { kind: 'owner', ownerOf: (user) => user.userId, ownerOfId: (userId) => userId },
  },
  Order: {
    entity: ORDER,
    idOf: (order) => order.orderId,
    keyOf: (orderId) => ORDER.keyOf({ orderId }),
    visibility: { kind: 'owner', ownerOf: (order) => order.userId },
  },
  Product: {
    entity: PRODUCT,
    idOf: (product) => product.productId,
    keyOf: (productId) => PRODUCT.keyOf({ productId }),
    visibility: { kind: 'public' },
  },
  Review: {
    entity: REVIEW,
    idOf: (review) => review.reviewId,
    keyOf: (reviewId) => REVIEW.keyOf({ reviewId }),
    visibility: { kind: 'public' },
  },
};

/** The node kinds, as global ids and `node()` accept them. */
export const NODE_KINDS = Object.keys(NODES) as NodeKind[];

/** The identity of `kind`, typed for any node (one cast here instead of one per caller). */
export const identityOf = (kind: NodeKind): NodeIdentity<NodeModel> => NODES[kind];

/** The raw id of any node. */
export const nodeIdOf = (node: NodeModel): string => identityOf(node.kind).idOf(node);

/** The key of any node's own item. */
export const nodeKeyOf = (node: NodeModel): ItemKey => identityOf(node.kind).keyOf(nodeIdOf(node));
