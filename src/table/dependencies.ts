/**
 * Dependency tags: names for what an answer read, and for what a change of the table can
 * change. The response cache (src/pipeline/responseCache/) files every answer under the tags of
 * its reads and evicts by the tags of each change, so both sides are derived here, next to the
 * key design, from the same key strings (keys.ts):
 *
 * | tag                      | what it names                                      | public |
 * | ------------------------ | -------------------------------------------------- | ------ |
 * | `product:<productId>`    | one product item                                   | yes    |
 * | `category:<category>`    | a category's products in GSI1 (every page of them)  | yes    |
 * | `categories`             | the category counters (`META#categories`)          | yes    |
 * | `user:<userId>`          | one user profile (its order counts included)       | no     |
 * | `user-orders:<userId>`   | a user's orders in their partition (table and LSI1) | no     |
 * | `order:<orderId>`        | one order                                          | no     |
 * | `orders:<view>:<shard>`  | one shard of one view of the shop-wide index GSI2  | no     |
 * | `email:<hash>`           | a user looked up by email in GSI1                  | no     |
 *
 * The rule both sides keep: a change of an item maps to the item's own tag and to the tag of
 * every range it belongs to, before and after the change (a product moving category leaves
 * one category's pages and joins another's). A range tag therefore covers both which items a
 * page lists and what it shows of them. A read this module cannot name (a partition or index
 * it does not know) has no tag: the answer that made it must not be cached.
 *
 * Tags contain only `A-Z a-z 0-9 _ - :`, so they travel as they are in `Cache-Tag` (comma
 * separated) and `Surrogate-Key` (space separated) headers; an email, which may hold anything
 * but `#` and whitespace, is hashed.
 */
import { createHash } from 'node:crypto';
import {
  CATEGORIES_PK,
  CATEGORY_SK_PREFIX,
  DETAILS_SK,
  orderShard,
  ORDER_SK_PREFIX,
  PRODUCT_SALE_SK_PREFIX,
  PROFILE_SK,
} from './keys.js';
import type { ItemKey } from './keys.js';
import { ORDER_STATUSES } from './models.js';

export const productTag = (productId: string): string => `product:${productId}`;
export const categoryTag = (category: string): string => `category:${category}`;
export const CATEGORIES_TAG = 'categories';
export const userTag = (userId: string): string => `user:${userId}`;
export const userOrdersTag = (userId: string): string => `user-orders:${userId}`;
export const orderTag = (orderId: string): string => `order:${orderId}`;
/** `view` is `ALL` or a status, as in the GSI2 partition key `ORDERS#ALL#<shard>` / `ORDERS#STATUS#<s>#<shard>`. */
export const shopOrdersTag = (view: string, shard: number | string): string => `orders:${view}:${shard}`;
export const emailTag = (normalizedEmail: string): string =>
  `email:${createHash('sha256').update(normalizedEmail).digest('base64url').slice(0, 22)}`;

/** A tag as it may appear on the wire (an invalidation message, a header): checked on receipt. */
export const TAG_PATTERN = /^[a-z-]{1,16}(:[A-Za-z0-9_-]{1,64}){0,2}$/;

/** Tags of data anyone may read (the catalog): only these reach a CDN. */
export const isPublicTag = (tag: string): boolean =>
  tag === CATEGORIES_TAG || tag.startsWith('product:') || tag.startsWith('category:');

/**
 * Tags of ranges read from an eventually consistent global index (GSI1, GSI2): a stream
 * record can arrive before the index shows its change (the cache's hold-down, see caching.md).
 */
export const isIndexTag = (tag: string): boolean =>
  tag.startsWith('category:') || tag.startsWith('email:') || tag.startsWith('orders:');

const afterPrefix = (value: string | undefined, prefix: string): string | undefined =>
  value?.startsWith(prefix) ? value.slice(prefix.length) : undefined;

/** The tag of one item's own key (the point read `items` makes), or undefined for items no answer reads by key. */
export function itemTag({ PK, SK }: ItemKey): string | undefined {
  const product = afterPrefix(PK, 'PRODUCT#');
  if (product !== undefined && SK === DETAILS_SK) return productTag(product);
  const user = afterPrefix(PK, 'USER#');
  if (user !== undefined && SK === PROFILE_SK) return userTag(user);
  const order = afterPrefix(PK, 'ORDER#');
  if (order !== undefined && SK === DETAILS_SK) return orderTag(order);
  if (PK === CATEGORIES_PK) return CATEGORIES_TAG;
  return undefined;
}

/** What a read asked DynamoDB for: items by key, or the partition of a Query (with its index). */
export type ReadTarget =
  { kind: 'item'; key: ItemKey } | { kind: 'query'; indexName: string | undefined; partitionKey: string };

/**
 * The tags a read depends on; undefined when it read something no tag names (an answer that
 * made it is not cacheable). A Query of a user's partition on the table reads the profile
 * and the orders in one (the item-collection read), so it depends on both.
 */
export function tagsOfRead(read: ReadTarget): string[] | undefined {
  if (read.kind === 'item') {
    const tag = itemTag(read.key);
    return tag === undefined ? undefined : [tag];
  }
  const { indexName, partitionKey } = read;
  if (indexName === undefined || indexName === 'LSI1') {
    const user = afterPrefix(partitionKey, 'USER#');
    if (user !== undefined)
      return indexName === undefined ? [userTag(user), userOrdersTag(user)] : [userOrdersTag(user)];
    if (partitionKey === CATEGORIES_PK && indexName === undefined) return [CATEGORIES_TAG];
    return undefined;
  }
  if (indexName === 'GSI1') {
    const category = afterPrefix(partitionKey, 'CATEGORY#');
    if (category !== undefined) return [categoryTag(category)];
    const email = afterPrefix(partitionKey, 'EMAIL#');
    if (email !== undefined) return [emailTag(email)];
    return undefined;
  }
  if (indexName === 'GSI2') {
    const tag = shopOrdersTagOf(partitionKey);
    return tag === undefined ? undefined : [tag];
  }
  return undefined;
}

/** `ORDERS#ALL#2` -> `orders:ALL:2`, `ORDERS#STATUS#SHIPPED#0` -> `orders:SHIPPED:0`. */
function shopOrdersTagOf(gsi2pk: string | undefined): string | undefined {
  const all = afterPrefix(gsi2pk, 'ORDERS#ALL#');
  if (all !== undefined) return shopOrdersTag('ALL', all);
  const byStatus = afterPrefix(gsi2pk, 'ORDERS#STATUS#');
  if (byStatus === undefined) return undefined;
  const [status, shard] = byStatus.split('#');
  return status && shard ? shopOrdersTag(status, shard) : undefined;
}

/** The string attributes of an item image that place it in ranges (the rest does not matter here). */
export interface ItemImage {
  PK?: string | undefined;
  SK?: string | undefined;
  GSI1PK?: string | undefined;
  GSI2PK?: string | undefined;
  orderId?: string | undefined;
}

/** The tags one image of an item belongs to: its own and those of the ranges it is in. */
export function tagsOfImage(image: ItemImage): string[] {
  const { PK, SK } = image;
  if (PK === undefined || SK === undefined) return [];
  const tags: string[] = [];
  const own = itemTag({ PK, SK });
  if (own) tags.push(own);
  if (PK === CATEGORIES_PK) {
    // A counter: the categories list, and `Category.productCount` beside its products.
    const category = afterPrefix(SK, CATEGORY_SK_PREFIX);
    if (category !== undefined) tags.push(categoryTag(category));
  }
  const user = afterPrefix(PK, 'USER#');
  if (user !== undefined && SK.startsWith(ORDER_SK_PREFIX)) {
    tags.push(userOrdersTag(user));
    // The copy in the user's partition is the order as pages show it: its id ends the sort key.
    const orderId = image.orderId ?? SK.slice(SK.lastIndexOf('#') + 1);
    if (orderId) tags.push(orderTag(orderId));
  }
  const category = afterPrefix(image.GSI1PK, 'CATEGORY#');
  if (category !== undefined) tags.push(categoryTag(category));
  const email = afterPrefix(image.GSI1PK, 'EMAIL#');
  if (email !== undefined) tags.push(emailTag(email));
  const shard = shopOrdersTagOf(image.GSI2PK);
  if (shard) tags.push(shard);
  return tags;
}

/** An AttributeValue map, as a stream record's Keys/OldImage/NewImage hold it (strings only matter here). */
export type AttributeMap = Record<string, unknown>;

const stringOf = (image: AttributeMap | undefined, name: string): string | undefined => {
  const value = image?.[name] as { S?: unknown } | undefined;
  return typeof value?.S === 'string' ? value.S : undefined;
};

const imageOf = (image: AttributeMap | undefined): ItemImage => ({
  PK: stringOf(image, 'PK'),
  SK: stringOf(image, 'SK'),
  GSI1PK: stringOf(image, 'GSI1PK'),
  GSI2PK: stringOf(image, 'GSI2PK'),
  orderId: stringOf(image, 'orderId'),
});

/**
 * The tags a stream record can change: those of its old and its new image (a stock change
 * invalidates the product and its category's pages, the in-stock ones included; a category
 * change both categories). Without images (a KEYS_ONLY stream) the keys alone give what they
 * can, as for a write's touched keys. Records of items no answer reads (checkpoints, leases,
 * sale markers, migration records) give none.
 */
export function tagsOfChange(record: {
  Keys?: AttributeMap | undefined;
  OldImage?: AttributeMap | undefined;
  NewImage?: AttributeMap | undefined;
}): string[] {
  const tags = new Set<string>();
  for (const image of [record.OldImage, record.NewImage]) {
    if (image) for (const tag of tagsOfImage(imageOf(image))) tags.add(tag);
  }
  if (tags.size === 0 && record.Keys) {
    const keys = imageOf(record.Keys);
    if (keys.PK !== undefined && keys.SK !== undefined)
      for (const tag of tagsOfWrite({ PK: keys.PK, SK: keys.SK })) tags.add(tag);
  }
  return [...tags];
}

/**
 * The tags a write of `key` may have changed, from the key alone (what a write reports as
 * `touched`): the writing instance evicts them before it answers. Index memberships the key
 * does not show are covered otherwise: a page lists its items, so it carries their item tags;
 * a product that joins a category changes the category's counter (touched too); an order's
 * shop-wide views are every view of its shard.
 */
export function tagsOfWrite(key: ItemKey): string[] {
  if (key.PK.startsWith('PRODUCT#') && key.SK.startsWith(PRODUCT_SALE_SK_PREFIX)) return [];
  const tags = tagsOfImage(key);
  const order = afterPrefix(key.PK, 'ORDER#') ?? (key.PK.startsWith('USER#') ? orderIdOfCopy(key.SK) : undefined);
  if (order !== undefined) {
    const shard = orderShard(order);
    tags.push(shopOrdersTag('ALL', shard), ...ORDER_STATUSES.map((status) => shopOrdersTag(status, shard)));
  }
  return [...new Set(tags)];
}

const orderIdOfCopy = (sk: string): string | undefined =>
  sk.startsWith(ORDER_SK_PREFIX) ? sk.slice(sk.lastIndexOf('#') + 1) : undefined;
