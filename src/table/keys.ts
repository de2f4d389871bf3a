/**
 * The only module that builds key strings (`USER#...`). Every id is checked here, before it
 * becomes part of a key: an id holding `#` could otherwise address another item
 * (`alice#ORDER` would forge a key inside alice's partition).
 */
import type { OrderStatus } from './models.js';
import { canonicalEmail, unicodeProblem } from './text.js';

/**
 * A value that cannot become part of a key. Thrown before any key exists; the GraphQL layer
 * answers it as BAD_USER_INPUT naming `argumentName`, the writes record it as INVALID_INPUT.
 */
export class InvalidKeyError extends Error {
  override name = 'InvalidKeyError';
  constructor(
    message: string,
    readonly argumentName: string,
  ) {
    super(message);
  }
}

export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Categories are keys too (`CATEGORY#<category>`); lower-case so "Books" and "books" agree. */
export const CATEGORY_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const MAX_EMAIL_LENGTH = 254;
/** local@domain.tld without whitespace, control characters or `#` (which would forge a key). */
// eslint-disable-next-line no-control-regex
const EMAIL_PATTERN = /^[^\s@\u0000-\u001f\u007f#]+@[^\s@\u0000-\u001f\u007f#]+\.[^\s@\u0000-\u001f\u007f#]+$/;

/** The table's primary key of one item. */
export interface ItemKey {
  PK: string;
  SK: string;
}

/** Returns `id` if it is a valid raw id; throws InvalidKeyError naming the argument otherwise. */
export function assertId(id: string, argumentName: string = 'id'): string {
  if (!ID_PATTERN.test(id)) {
    throw new InvalidKeyError(
      `${argumentName} must be 1-64 characters of A-Z a-z 0-9 _ -, got ${describe(id)}`,
      argumentName,
    );
  }
  return id;
}

export function assertCategory(category: string): string {
  if (!CATEGORY_PATTERN.test(category)) {
    throw new InvalidKeyError(`category must be 1-64 characters of a-z 0-9 _ -, got ${describe(category)}`, 'category');
  }
  return category;
}

/**
 * Brings a category to its stored form (trimmed, lower-case) and checks it: reads and writes
 * both go through here, so `products(category: "Books")` finds what `createProduct` stored as `books`.
 */
export const normalizeCategory = (category: string): string => assertCategory(category.trim().toLowerCase());

/**
 * Brings an email to its compared form (NFKC, then lower-case: see text.ts) and checks it.
 * Only the shape DynamoDB keys need is enforced here (one `@`, no whitespace, control, format
 * or separator characters, well-formed, bounded length); delivery is not our concern.
 */
export function normalizeEmail(email: string, argumentName = 'email'): string {
  // Surrounding whitespace (a pasted tab or newline) is trimmed, as before; inside, nothing invisible passes.
  const problem = unicodeProblem(email.trim());
  if (problem) throw new InvalidKeyError(`${argumentName} ${problem}`, argumentName);
  const normalized = canonicalEmail(email);
  const ok =
    normalized.length <= MAX_EMAIL_LENGTH && EMAIL_PATTERN.test(normalized) && unicodeProblem(normalized) === undefined;
  if (!ok) throw new InvalidKeyError(`${argumentName} must be an email address, got ${describe(email)}`, argumentName);
  return normalized;
}

/** Quotes a rejected value for an error message, shortened so a huge input is not echoed back. */
function describe(value: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return JSON.stringify(shown);
}

export const PROFILE_SK = 'PROFILE';
export const DETAILS_SK = 'DETAILS';
export const ORDER_SK_PREFIX = 'ORDER#';

export const userKey = (userId: string): ItemKey => ({ PK: userPK(userId), SK: PROFILE_SK });
export const userPK = (userId: string): string => `USER#${assertId(userId, 'userId')}`;
export const orderKey = (orderId: string): ItemKey => ({ PK: `ORDER#${assertId(orderId, 'orderId')}`, SK: DETAILS_SK });
export const productKey = (productId: string): ItemKey => ({
  PK: `PRODUCT#${assertId(productId, 'productId')}`,
  SK: DETAILS_SK,
});
export const emailGuardKey = (normalizedEmail: string): ItemKey => ({ PK: `EMAIL#${normalizedEmail}`, SK: 'UNIQUE' });
export const emailGSI1PK = (normalizedEmail: string): string => `EMAIL#${normalizedEmail}`;
export const categoryGSI1PK = (category: string): string => `CATEGORY#${assertCategory(category)}`;
export const productGSI1SK = (name: string, productId: string): string =>
  `PRODUCT#${name.toLowerCase()}#${assertId(productId, 'productId')}`;

/** SK of an order's copy in its user's partition: newest first is a reverse range read. */
export const userOrderSK = (placedAt: string, orderId: string): string =>
  `${ORDER_SK_PREFIX}${placedAt}#${assertId(orderId, 'orderId')}`;
export const statusLSI1SKPrefix = (status: OrderStatus): string => `STATUS#${status}#`;
export const userOrderLSI1SK = (status: OrderStatus, placedAt: string, orderId: string): string =>
  `${statusLSI1SKPrefix(status)}${placedAt}#${assertId(orderId, 'orderId')}`;

/**
 * SK prefix of the sale markers in a product's partition: one item per (product, order) that
 * records whether the stream processor counted that order's units in `soldCount` (src/streams/).
 */
export const PRODUCT_SALE_SK_PREFIX = 'SOLD#';
export const productSaleKey = (productId: string, orderId: string): ItemKey => ({
  PK: productKey(productId).PK,
  SK: `${PRODUCT_SALE_SK_PREFIX}${assertId(orderId, 'orderId')}`,
});

/** The partition of the stream consumers' checkpoints (src/streams/checkpoints.ts). */
export const STREAM_CHECKPOINT_PK = 'META#stream';
/** Shard ids come from DynamoDB (`shardId-00000001796221861662-1f9b9f29`), consumer names from configuration. */
const SHARD_ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
export const streamCheckpointSKPrefix = (consumerName: string): string =>
  `CONSUMER#${assertId(consumerName, 'consumerName')}#SHARD#`;
export const streamCheckpointKey = (consumerName: string, shardId: string): ItemKey => {
  // Not user input, but a '#' in it would still address another consumer's checkpoint.
  if (!SHARD_ID_PATTERN.test(shardId)) throw new Error(`unexpected shard id ${describe(shardId)}`);
  return { PK: STREAM_CHECKPOINT_PK, SK: `${streamCheckpointSKPrefix(consumerName)}${shardId}` };
};

/**
 * A shard's lease among the consumers that share `consumerName` (src/streams/leases.ts): the
 * one consumer that may read the shard now. Beside the checkpoints, under another prefix.
 */
export const streamLeaseSKPrefix = (consumerName: string): string =>
  `LEASE#${assertId(consumerName, 'consumerName')}#SHARD#`;
export const streamLeaseKey = (consumerName: string, shardId: string): ItemKey => {
  if (!SHARD_ID_PATTERN.test(shardId)) throw new Error(`unexpected shard id ${describe(shardId)}`);
  return { PK: STREAM_CHECKPOINT_PK, SK: `${streamLeaseSKPrefix(consumerName)}${shardId}` };
};

/**
 * A running consumer of `consumerName`, renewed with its leases: how the consumers count each
 * other to share the shards evenly (src/streams/shardLeases.ts). `worker` is the lease owner
 * (host, pid and a random part).
 */
const WORKER_PATTERN = /^[A-Za-z0-9_.:-]{1,200}$/;
export const streamWorkerSKPrefix = (consumerName: string): string =>
  `WORKER#${assertId(consumerName, 'consumerName')}#`;
export const streamWorkerKey = (consumerName: string, worker: string): ItemKey => {
  if (!WORKER_PATTERN.test(worker)) throw new Error(`unexpected consumer owner ${describe(worker)}`);
  return { PK: STREAM_CHECKPOINT_PK, SK: `${streamWorkerSKPrefix(consumerName)}${worker}` };
};

/** The marker item that records that the demo data was written (see src/seed/). */
export const SEED_MARKER_KEY: ItemKey = { PK: 'META#seed', SK: 'DEMO' };

/** True for an order's copy in its user's partition (what the orders connections read). */
export const isUserOrderKey = (key: ItemKey): boolean =>
  key.PK.startsWith('USER#') && key.SK.startsWith(ORDER_SK_PREFIX);
/** True for a product item (what the category connections read). */
export const isProductKey = (key: ItemKey): boolean => key.PK.startsWith('PRODUCT#') && key.SK === DETAILS_SK;

/** A stable string for an ItemKey, used as DataLoader cache key and for de-duplication. */
export const itemKeyId = (key: ItemKey): string => `${key.PK}\n${key.SK}`;

/**
 * GSI2, shop-wide orders by placedAt, write-sharded: every order lands in one of
 * ORDER_SHARDS partitions per view, chosen from its orderId, so no single index partition
 * takes every order write of the shop (or of one status). A fixed constant: changing it
 * would move every order to another partition, i.e. a migration.
 *
 * Two views share the index (overloaded keys), one per copy of an order, so neither needs
 * an item of its own: the details item carries the "all orders" key, the copy in the user's
 * partition the "by status" key (moved by the transaction that changes the status).
 */
export const ORDER_SHARDS = 4;
export type OrderView = OrderStatus | 'ALL';

/** The shard of an order: a stable hash of its id (FNV-1a), so both copies and every writer agree. */
export const orderShard = (orderId: string): number => fnv1a(orderId) % ORDER_SHARDS;

function fnv1a(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export const shopOrdersGSI2PK = (view: OrderView, shard: number): string => {
  if (!Number.isInteger(shard) || shard < 0 || shard >= ORDER_SHARDS) throw new Error(`no order shard ${shard}`);
  return view === 'ALL' ? `ORDERS#ALL#${shard}` : `ORDERS#STATUS#${view}#${shard}`;
};
/** The sort key of both views: placedAt, then orderId (unique across shards, so pages merge exactly). */
export const shopOrderGSI2SK = (placedAt: string, orderId: string): string =>
  `${ORDER_SK_PREFIX}${placedAt}#${assertId(orderId, 'orderId')}`;

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

/**
 * The shop-wide product listings (GSI4 by name, GSI5 by price) are write-sharded like GSI2:
 * every write to a product (each order changes its stock) rewrites its entry in every index
 * that projects it, so one `PRODUCTS` partition would take the whole shop's order lines.
 * A product's shard is a stable hash of its id; a page reads every shard and merges them.
 * A constant: changing it moves every product to another partition, i.e. a migration.
 */
export const PRODUCT_SHARDS = 4;
export const productShard = (productId: string): number => fnv1a(assertId(productId, 'productId')) % PRODUCT_SHARDS;
export const shopProductsGSI4PK = (shard: number): string => {
  if (!Number.isInteger(shard) || shard < 0 || shard >= PRODUCT_SHARDS) throw new Error(`no product shard ${shard}`);
  return `PRODUCTS#${shard}`;
};

/** Cents as a fixed-width decimal, so string order is numeric order (MAX_CENTS has 9 digits). */
const PRICE_DIGITS = 12;
const priceText = (cents: number): string => {
  if (!Number.isSafeInteger(cents) || cents < 0 || String(cents).length > PRICE_DIGITS) {
    throw new Error(`unexpected price ${cents}`);
  }
  return String(cents).padStart(PRICE_DIGITS, '0');
};
export const PRICE_SK_PREFIX = 'PRICE#';
/** GSI3SK, the price order of GSI3 and GSI5: price, then productId. */
export const productPriceGSI3SK = (cents: number, productId: string): string =>
  `${PRICE_SK_PREFIX}${priceText(cents)}#${assertId(productId, 'productId')}`;
/**
 * An inclusive price range as the bounds of a BETWEEN on GSI3SK. `~` sorts after every
 * character of an id, so the upper bound takes every product at exactly `maxCents`.
 */
export function priceRange(minCents: number | undefined, maxCents: number | undefined): { from: string; to: string } {
  return {
    from: minCents === undefined ? PRICE_SK_PREFIX : `${PRICE_SK_PREFIX}${priceText(minCents)}`,
    to: maxCents === undefined ? `${PRICE_SK_PREFIX}~` : `${PRICE_SK_PREFIX}${priceText(maxCents)}#~`,
  };
}

/** Prefix of a category's products in GSI1 whose lower-cased name starts with `namePrefix`. */
export const productNamePrefixGSI1SK = (namePrefix: string): string => `PRODUCT#${namePrefix.toLowerCase()}`;

/** Per-category product counters live in one partition, so listing the categories is one Query. */
export const CATEGORIES_PK = 'META#categories';
export const CATEGORY_SK_PREFIX = 'CATEGORY#';
export const categoryCounterKey = (category: string): ItemKey => ({
  PK: CATEGORIES_PK,
  SK: `${CATEGORY_SK_PREFIX}${assertCategory(category)}`,
});

/** The profile attribute counting a user's orders in one status (O(1) totalCount). */
export const statusCountAttribute = (status: OrderStatus): string => `orderCount${status}`;

/** The partition of the migrations' records: one item per migration, version and history. */
export const MIGRATIONS_PK = 'META#migrations';
export const migrationKey = (id: string): ItemKey => ({
  PK: MIGRATIONS_PK,
  SK: `MIGRATION#${assertId(id, 'migration')}`,
});

/**
 * The trusted-documents registry: one partition holds its head (a revision every change
 * increments, and the totals the bounds are checked against) and one item per app manifest;
 * each manifest's documents live in a partition of their own, one item per document, so a
 * manifest is read with one paginated Query and retired without touching the others. Beside its
 * documents the partition holds the manifest's index, a few items listing what it trusts.
 */
export const DOCUMENT_REGISTRY_PK = 'META#documents';
export const DOCUMENT_REGISTRY_HEAD_KEY: ItemKey = { PK: DOCUMENT_REGISTRY_PK, SK: 'HEAD' };
export const APP_MANIFEST_SK_PREFIX = 'MANIFEST#';
/** App names are lower-case like categories; versions allow semver's dots and `+` (never `#`). */
export const APP_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const APP_VERSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export function assertAppName(app: string): string {
  if (!APP_NAME_PATTERN.test(app)) {
    throw new InvalidKeyError(`app must be 1-64 characters of a-z 0-9 _ -, got ${describe(app)}`, 'app');
  }
  return app;
}

export function assertAppVersion(version: string): string {
  if (!APP_VERSION_PATTERN.test(version)) {
    throw new InvalidKeyError(
      `version must be 1-64 characters of A-Z a-z 0-9 . _ + -, got ${describe(version)}`,
      'version',
    );
  }
  return version;
}

export const appManifestKey = (app: string, version: string): ItemKey => ({
  PK: DOCUMENT_REGISTRY_PK,
  SK: `${APP_MANIFEST_SK_PREFIX}${assertAppName(app)}#${assertAppVersion(version)}`,
});
/** The partition of one manifest's documents; `contentId` (hex) names its content. */
export const manifestDocumentsPK = (app: string, version: string, contentId: string): string => {
  if (!/^[0-9a-f]{16}$/.test(contentId)) throw new Error(`unexpected manifest content id ${describe(contentId)}`);
  return `DOCUMENTS#${assertAppName(app)}#${assertAppVersion(version)}#${contentId}`;
};
/** The sort-key prefixes of a manifest's partition: its documents, and the parts of its index. */
export const MANIFEST_DOCUMENT_SK_PREFIX = 'DOC#';
export const MANIFEST_INDEX_SK_PREFIX = 'INDEX#';
/** A document's item, by the sha256 of its text (whatever id the client sends for it). */
export const manifestDocumentKey = (app: string, version: string, contentId: string, sha256: string): ItemKey =>
  documentKeyIn(manifestDocumentsPK(app, version, contentId), sha256);
/** A document's item in a manifest partition already named (`manifestDocumentsPK`). */
export const documentKeyIn = (partition: string, sha256: string): ItemKey => {
  if (!SHA256_HEX.test(sha256)) throw new InvalidKeyError(`not a sha256 hex digest: ${describe(sha256)}`, 'hash');
  return { PK: partition, SK: `${MANIFEST_DOCUMENT_SK_PREFIX}${sha256}` };
};
/**
 * One part of a manifest's index (the ids and sha256 of its documents, without their texts), so
 * a process can learn what is trusted without reading every document.
 */
export const manifestIndexKey = (app: string, version: string, contentId: string, part: number): ItemKey => ({
  PK: manifestDocumentsPK(app, version, contentId),
  SK: `${MANIFEST_INDEX_SK_PREFIX}${String(part).padStart(4, '0')}`,
});
