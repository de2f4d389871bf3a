/**
 * Item <-> domain model codecs, by the names the writes, loaders and seed use them with. Each
 * codec is part of its kind's declaration (entities/): items are what the document client
 * reads and writes, models what resolvers see.
 */
import { APP_MANIFEST, STREAM_CHECKPOINT, TRUSTED_DOCUMENT } from './entities/meta.js';
import { ORDER, USER_ORDER } from './entities/order.js';
import { CATEGORY, PRODUCT } from './entities/product.js';
import { EMAIL_GUARD, USER } from './entities/user.js';

export type { Item } from './entities/attributes.js';
export { CorruptItemError } from './entities/attributes.js';
export { itemToNode } from './entities/registry.js';
export { noStatusCounts, statusCountAttributes } from './entities/user.js';
export { itemToOrder, shopOrderIndexKeys } from './entities/order.js';
export { productBrowseKeys } from './entities/product.js';

/** `entityType` values. An order has two items: its details and the copy in its user's partition. */
export const EntityType = {
  User: USER.type,
  EmailGuard: EMAIL_GUARD.type,
  Order: ORDER.type,
  UserOrder: USER_ORDER.type,
  Product: PRODUCT.type,
  Category: CATEGORY.type,
  Meta: STREAM_CHECKPOINT.type,
  AppManifest: APP_MANIFEST.type,
  TrustedDocument: TRUSTED_DOCUMENT.type,
} as const;

export const userToItem = USER.codec.toItem;
export const itemToUser = USER.codec.fromItem;
/** The order's own item, `ORDER#<id>/DETAILS`: the target of order(orderId) and node(id); in GSI2's "all orders" view. */
export const orderToDetailsItem = ORDER.codec.toItem;
/** The full copy in the user's partition, so a page of a user's orders needs no further reads. */
export const orderToUserItem = USER_ORDER.codec.toItem;
export const productToItem = PRODUCT.codec.toItem;
export const itemToProduct = PRODUCT.codec.fromItem;
/** The counter item of a category (`META#categories / CATEGORY#<name>`). */
export const categoryToItem = CATEGORY.codec.toItem;
export const itemToCategory = CATEGORY.codec.fromItem;
