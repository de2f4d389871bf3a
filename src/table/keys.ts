/**
 * The keys of the declared kinds, by the names the writes, loaders, migrations and tests build
 * them with. Nothing here spells a key: each grammar is a template of its declaration
 * (entities/ranges.ts and the entity files), which builds it with every id checked and parses
 * it back for the dependency tags; ids.ts says what may become part of a key.
 */
import { CATEGORY_PK, CATEGORIES_PK as CATEGORIES_PARTITION, EMAIL, ORDER_SK, PRICE_SK } from './entities/ranges.js';
import { PRODUCT_NAME_SK, SHOP_ORDERS_ALL_PK, SHOP_ORDERS_STATUS_PK, SHOP_PRODUCTS_PK } from './entities/ranges.js';
import { STATUS_SK, USER_PK } from './entities/ranges.js';
import {
  APP_MANIFEST,
  DOCUMENT_REGISTRY_HEAD,
  FEED_PROBE,
  FEED_PROBE_WRITTEN_AT,
  DOCUMENT_REGISTRY_PK as REGISTRY_PARTITION,
  MANIFEST_DOCUMENTS_PK,
  MANIFEST_INDEX_PART,
  MIGRATION,
  MIGRATIONS_PK as MIGRATIONS_PARTITION,
  SEED_MARKER,
  STREAM_CHECKPOINT,
  STREAM_LEASE,
  STREAM_PK,
  STREAM_WORKER,
  TRUSTED_DOCUMENT,
} from './entities/meta.js';
import { ORDER } from './entities/order.js';
import { CATEGORY, PRODUCT, SALE_MARKER } from './entities/product.js';
import type { ItemKey } from './entities/template.js';
import { EMAIL_GUARD, USER } from './entities/user.js';
import type { OrderStatus } from './models.js';

export {
  APP_NAME_PATTERN,
  APP_VERSION_PATTERN,
  assertAppName,
  assertAppVersion,
  assertCategory,
  assertId,
  CATEGORY_PATTERN,
  ID_PATTERN,
  InvalidKeyError,
  MAX_EMAIL_LENGTH,
  normalizeCategory,
  normalizeEmail,
} from './ids.js';
export type { ItemKey } from './entities/template.js';
export { ORDER_SHARDS, orderShard, PRODUCT_SHARDS, productShard } from './entities/shards.js';
export { statusCountAttribute } from './entities/user.js';

export const PROFILE_SK = USER.spec.key.SK.prefix;
export const ORDER_SK_PREFIX = ORDER_SK.prefix;

export const userKey = (userId: string): ItemKey => USER.keyOf({ userId });
export const userPK = (userId: string): string => USER_PK.build({ userId });
export const orderKey = (orderId: string): ItemKey => ORDER.keyOf({ orderId });
export const productKey = (productId: string): ItemKey => PRODUCT.keyOf({ productId });
export const emailGuardKey = (normalizedEmail: string): ItemKey => EMAIL_GUARD.keyOf({ email: normalizedEmail });
export const emailGSI1PK = (normalizedEmail: string): string => EMAIL.build({ email: normalizedEmail });
export const categoryGSI1PK = (category: string): string => CATEGORY_PK.build({ category });
export const productGSI1SK = (name: string, productId: string): string => PRODUCT_NAME_SK.build({ name, productId });

/** SK of an order's copy in its user's partition: newest first is a reverse range read. */
export const userOrderSK = (placedAt: string, orderId: string): string => ORDER_SK.build({ placedAt, orderId });
export const statusLSI1SKPrefix = (status: OrderStatus): string => STATUS_SK.prefixOf({ status });
export const userOrderLSI1SK = (status: OrderStatus, placedAt: string, orderId: string): string =>
  STATUS_SK.build({ status, placedAt, orderId });

/** SK prefix of the sale markers in a product's partition (src/streams/soldCount.ts). */
export const PRODUCT_SALE_SK_PREFIX = SALE_MARKER.spec.key.SK.prefix;
export const productSaleKey = (productId: string, orderId: string): ItemKey =>
  SALE_MARKER.keyOf({ productId, orderId });

/** The partition of the stream consumers' checkpoints, leases and heartbeats (src/streams/). */
export const STREAM_CHECKPOINT_PK = STREAM_PK.build({});
export const streamCheckpointSKPrefix = (consumerName: string): string =>
  STREAM_CHECKPOINT.spec.key.SK.prefixOf({ consumerName });
export const streamCheckpointKey = (consumerName: string, shardId: string): ItemKey =>
  STREAM_CHECKPOINT.keyOf({ consumerName, shardId });
export const streamLeaseSKPrefix = (consumerName: string): string =>
  STREAM_LEASE.spec.key.SK.prefixOf({ consumerName });
export const streamLeaseKey = (consumerName: string, shardId: string): ItemKey =>
  STREAM_LEASE.keyOf({ consumerName, shardId });
export const streamWorkerSKPrefix = (consumerName: string): string =>
  STREAM_WORKER.spec.key.SK.prefixOf({ consumerName });
export const streamWorkerKey = (consumerName: string, worker: string): ItemKey =>
  STREAM_WORKER.keyOf({ consumerName, worker });

/** The feed probe: one item, which API instances overwrite when their invalidation feed falls silent. */
export const FEED_PROBE_KEY: ItemKey = FEED_PROBE.keyOf({});
/** The probe's attribute that holds when it was written (epoch ms). */
export { FEED_PROBE_WRITTEN_AT };

/** The marker item that records that the demo data was written (see src/seed/). */
export const SEED_MARKER_KEY: ItemKey = SEED_MARKER.keyOf({});

/** A stable string for an ItemKey, used as DataLoader cache key and for de-duplication. */
export const itemKeyId = (key: ItemKey): string => `${key.PK}\n${key.SK}`;

export type OrderView = OrderStatus | 'ALL';

/** The GSI2 partition of one shard of one view (`ALL`, or a status) of the shop's orders. */
export const shopOrdersGSI2PK = (view: OrderView, shard: number): string =>
  view === 'ALL' ? SHOP_ORDERS_ALL_PK.build({ shard }) : SHOP_ORDERS_STATUS_PK.build({ status: view, shard });
/** The sort key of both views: placedAt, then orderId (unique across shards, so pages merge exactly). */
export const shopOrderGSI2SK = userOrderSK;

/**
 * A `[placedAfter, placedBefore)` window as the bounds of a BETWEEN on a sort key that starts
 * with `prefix` and continues `<placedAt>#<orderId>`. The upper bound `prefix + placedBefore`
 * sorts before every key of an order placed at placedBefore (those continue with `#`), so
 * the window is half-open without a filter. `~` sorts after every digit: "no upper bound".
 */
export function placedWindow(
  prefix: string,
  placedAfter: string | null | undefined,
  placedBefore: string | null | undefined,
): { from: string; to: string } {
  return { from: `${prefix}${placedAfter ?? ''}`, to: `${prefix}${placedBefore ?? '~'}` };
}

export const shopProductsGSI4PK = (shard: number): string => SHOP_PRODUCTS_PK.build({ shard });

/** GSI3SK, the price order of GSI3 and GSI5: price, then productId. */
export const productPriceGSI3SK = (cents: number, productId: string): string =>
  PRICE_SK.build({ price: cents, productId });
/**
 * An inclusive price range as the bounds of a BETWEEN on GSI3SK. `~` sorts after every
 * character of an id, so the upper bound takes every product at exactly `maxCents`.
 */
export function priceRange(minCents: number | undefined, maxCents: number | undefined): { from: string; to: string } {
  // prefixOf ends with the `#` before the productId: the bounds stop at the price.
  const atPrice = (cents: number) => PRICE_SK.prefixOf({ price: cents }).slice(0, -1);
  return {
    from: minCents === undefined ? PRICE_SK.prefix : atPrice(minCents),
    to: maxCents === undefined ? `${PRICE_SK.prefix}~` : `${atPrice(maxCents)}#~`,
  };
}

/** Prefix of a category's products in GSI1 whose lower-cased name starts with `namePrefix`. */
export const productNamePrefixGSI1SK = (namePrefix: string): string =>
  `${PRODUCT_NAME_SK.prefix}${namePrefix.toLowerCase()}`;

/** Per-category product counters live in one partition, so listing the categories is one Query. */
export const CATEGORIES_PK = CATEGORIES_PARTITION.build({});
export const categoryCounterKey = (category: string): ItemKey => CATEGORY.keyOf({ category });

/** The partition of the migrations' records: one item per migration, version and history. */
export const MIGRATIONS_PK = MIGRATIONS_PARTITION.build({});
export const migrationKey = (id: string): ItemKey => MIGRATION.keyOf({ id });

/** The trusted-documents registry (entities/meta.ts). */
export const DOCUMENT_REGISTRY_PK = REGISTRY_PARTITION.build({});
export const DOCUMENT_REGISTRY_HEAD_KEY: ItemKey = DOCUMENT_REGISTRY_HEAD.keyOf({});
export const APP_MANIFEST_SK_PREFIX = APP_MANIFEST.spec.key.SK.prefix;
export const appManifestKey = (app: string, version: string): ItemKey => APP_MANIFEST.keyOf({ app, version });
/** The partition of one manifest's documents; `contentId` (hex) names its content. */
export const manifestDocumentsPK = (app: string, version: string, contentId: string): string =>
  MANIFEST_DOCUMENTS_PK.build({ app, version, contentId });
/** A document's item, by the sha256 of its text (whatever id the client sends for it). */
export const manifestDocumentKey = (app: string, version: string, contentId: string, sha256: string): ItemKey =>
  TRUSTED_DOCUMENT.keyOf({ app, version, contentId, sha256 });
/** The sort-key prefixes of a manifest's partition: its documents, and the parts of its index. */
export const MANIFEST_DOCUMENT_SK_PREFIX = TRUSTED_DOCUMENT.spec.key.SK.prefix;
export const MANIFEST_INDEX_SK_PREFIX = MANIFEST_INDEX_PART.spec.key.SK.prefix;
/** A document's item in a manifest partition already named (`manifestDocumentsPK`). */
export const documentKeyIn = (partition: string, sha256: string): ItemKey => {
  const parsed = MANIFEST_DOCUMENTS_PK.parse(partition);
  if (!parsed) throw new Error(`not a manifest's partition: ${JSON.stringify(partition)}`);
  return TRUSTED_DOCUMENT.keyOf({ ...parsed, sha256 });
};
/** One part of a manifest's index (MANIFEST_INDEX_PART). */
export const manifestIndexKey = (app: string, version: string, contentId: string, part: number): ItemKey =>
  MANIFEST_INDEX_PART.keyOf({ app, version, contentId, part: String(part).padStart(4, '0') });
