/**
 * Per-request loaders, one per access pattern (docs/design.md). The `items` loader serves every
 * point read ("item by key") whatever the entity type, so one level of a query costs one
 * BatchGetItem: an order's user and its products travel together, and so do the nodes of
 * `nodes(ids:)`. Queries have loaders of their own, which collapse identical reads (the same
 * page asked for twice under two aliases) into one request.
 *
 * Each loader reads two ways through one cache (loaderCache.ts): `load`, one key at a time,
 * batched per tick (graphql-js's resolvers), and `readAll`, every key of a round at once with
 * one promise for the round (the planned executor's, src/pipeline/execution/plan/). Both send the same
 * requests and see what the other read.
 */
import DataLoader from 'dataloader';
import { itemToCategory, itemToUser } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { GSI1 } from '../table/definition.js';
import { identityOf, NODES, nodeKeyOf } from '../table/entities/nodes.js';
import type { NodeKind, NodeOf } from '../table/entities/nodes.js';
import type { Range } from '../table/entities/entity.js';
import { itemToModel, rangesOfKey } from '../table/entities/registry.js';
import type { ItemModel } from '../table/entities/registry.js';
import {
  CATEGORIES,
  CATEGORY_PRODUCTS,
  PRODUCT_REVIEWS,
  SHOP_PRODUCTS,
  USER_BY_EMAIL,
  USER_ORDERS,
} from '../table/entities/ranges.js';
import { PRODUCT_RATING } from '../table/entities/review.js';
import { MAX_CATEGORIES } from '../table/limits.js';
import { CATEGORIES_PK, categoryCounterKey, emailGSI1PK, itemKeyId } from '../table/keys.js';
import type { ItemKey } from '../table/keys.js';
import type {
  CategoryModel,
  NodeModel,
  OrderModel,
  OrderStatus,
  ProductModel,
  ProductRatingModel,
  ReviewModel,
  UserModel,
} from '../table/models.js';
import { unmarshallItem, unmarshallItems } from './attributeValues.js';
import { batchGetItems } from './batchGet.js';
import { LoaderCache } from './loaderCache.js';
import type { Fetch } from './loaderCache.js';
import { asPromise, mapped, settle } from './continuation.js';
import type { Continuation } from './continuation.js';
import { rangeQuery } from './dependencyRecord.js';
import type { Dynamo } from './client.js';
import type { CursorCodec } from './cursor.js';
import { shopOrdersQuery, userOrdersQuery } from './pageQueries.js';
import type { PlacedWindow } from './pageQueries.js';
import { DEFAULT_PRODUCT_ORDER, productsQuery } from './productQueries.js';
import type { ProductFilter, ProductOrder } from './productQueries.js';
import { readPage } from './pagination.js';
import { fusableReviewsPage, productReviewsQuery, readProductPage } from './productPage.js';
import type { ReviewOrder } from './productPage.js';
import type { ConnectionArgs, Page } from './pagination.js';
import type { SchemaGate } from './schemaGate.js';
import { readShardedPage } from './shardedPages.js';
import { fusablePage, readUserWithOrders } from './userCollection.js';

export { categoryProductsQuery, shopOrdersQuery, userOrdersQuery } from './pageQueries.js';
export { shopProductsQuery } from './productQueries.js';

/** What the data layer needs from the process: shared by every request. */
export interface DataSources {
  dynamo: Dynamo;
  tableName: string;
  cursors: CursorCodec;
  /** What the table can serve yet; open (everything) when absent. */
  schema?: SchemaGate | undefined;
  /**
   * Read a user and the first page of their orders in one Query where a request asks for both
   * (userCollection.ts). On unless false: the benchmark turns it off to measure it.
   */
  itemCollections?: boolean | undefined;
}

export interface OrdersPageKey {
  userId: string;
  status: OrderStatus | null;
  window?: PlacedWindow | undefined;
  args: ConnectionArgs;
}

export interface ShopOrdersPageKey {
  status: OrderStatus | null;
  window: PlacedWindow;
  args: ConnectionArgs;
}

export interface ReviewsPageKey {
  productId: string;
  order: ReviewOrder;
  args: ConnectionArgs;
}

export interface ProductsPageKey {
  /** null: the whole shop. */
  category: string | null;
  filter?: ProductFilter | undefined;
  order?: ProductOrder | undefined;
  args: ConnectionArgs;
}

export type Loaders = ReturnType<typeof createLoaders>;

const argsKey = (args: ConnectionArgs) => JSON.stringify([args.first, args.after, args.last, args.before]);
const windowKey = (window: PlacedWindow = {}) => JSON.stringify([window.placedAfter, window.placedBefore]);
const ordersPageId = ({ userId, status, window, args }: OrdersPageKey) =>
  JSON.stringify([userId, status, windowKey(window), argsKey(args)]);
const reviewsPageId = ({ productId, order, args }: ReviewsPageKey) => JSON.stringify([productId, order, argsKey(args)]);

/** A read of one key that hands its value (or its failure) to `then` within its own last `then`. */
type ReadOne<K, V> = <R>(key: K, then: Continuation<V, R>) => Promise<R>;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
const same = <T>(value: T): T => value;

/**
 * Reads each key on its own (a Query per key): one key costs its read's promise and nothing
 * more. A key that fails (a refused cursor or filter) fails alone: among several, its value is
 * its error, which DataLoader hands to that key's loads only (not the first failure to every key
 * of the batch, which would give a field another field's error).
 */
function eachKey<K, V>(read: ReadOne<K, V>): Fetch<K, V> {
  const readOne = <R>(key: K, then: Continuation<V, R>): Promise<R> => {
    try {
      return read(key, then);
    } catch (error) {
      return Promise.resolve().then(() => then.failed(error));
    }
  };
  return (keys, then) =>
    keys.length === 1
      ? readOne(
          keys[0] as K,
          mapped(then, (value: V) => [value]),
        )
      : Promise.all(keys.map((key) => readOne<V | Error>(key, { done: same, failed: asError }))).then(
          (values) => settle(then, () => values as V[]),
          then.failed,
        );
}

/** A DataLoader over `cache`: `load` for graphql-js's resolvers, `readAll` for a round of the planned executor. */
function cachedLoader<K, V>(fetch: Fetch<K, V>, idOf: (key: K) => string) {
  const cache = new LoaderCache<V>();
  const loader = new DataLoader<K, V, string>((keys) => fetch(keys, asPromise()), {
    cacheKeyFn: idOf,
    cacheMap: cache,
  });
  return Object.assign(loader, {
    cache,
    /**
     * The values of `keys` in key order, handed to `then`: now when all are known, else within
     * the round's one promise (loaderCache.ts).
     */
    readAll: <R>(keys: readonly K[], then: Continuation<V[], R>): R | Promise<R> =>
      cache.readAll(keys, idOf, fetch, then),
  });
}

export function createLoaders({ dynamo, tableName, cursors, itemCollections = true }: DataSources) {
  const items = cachedLoader<ItemKey, ItemModel | null>(
    (keys, then) =>
      // Strongly consistent: a query sent right after a mutation sees it (read-your-writes).
      batchGetItems(
        dynamo.doc,
        tableName,
        keys,
        { consistentRead: true },
        mapped(then, (rows: (Item | null)[]) => rows.map((row) => (row ? itemToModel(row) : null))),
      ),
    itemKeyId,
  );

  /** Makes later reads in this request see `node` (after a write, or from a Query's items). */
  const prime = (node: NodeModel) => items.cache.put(itemKeyId(nodeKeyOf(node)), node);
  const primeAll = (nodes: readonly NodeModel[]) => {
    for (const node of nodes) prime(node);
  };

  const userByEmail = cachedLoader<string, UserModel | null>(
    eachKey(<R>(email: string, then: Continuation<UserModel | null, R>): Promise<R> =>
      dynamo.doc
        .send(
          rangeQuery(
            {
              TableName: tableName,
              IndexName: GSI1,
              KeyConditionExpression: 'GSI1PK = :pk',
              ExpressionAttributeValues: { ':pk': emailGSI1PK(email) },
              Limit: 1,
            },
            USER_BY_EMAIL.read({ email }),
          ),
        )
        .then(
          (result) =>
            settle(then, () => {
              const item = result.Items?.[0];
              if (!item) return null;
              const user = itemToUser(unmarshallItem(item));
              prime(user);
              return user;
            }),
          then.failed,
        ),
    ),
    (email) => email,
  );

  const ordersPages = cachedLoader<OrdersPageKey, Page<OrderModel>>(
    eachKey(<R>({ userId, status, window, args }: OrdersPageKey, then: Continuation<Page<OrderModel>, R>): Promise<R> =>
      readPage(
        dynamo.doc,
        userOrdersQuery(tableName, userId, status, window),
        args,
        cursors,
        mapped(then, ({ page }: { page: Page<OrderModel> }) => {
          primeAll(page.edges.map((edge) => edge.node));
          return page;
        }),
      ),
    ),
    ordersPageId,
  );

  // GSI2 is eventually consistent: its copies are not primed into `items`, which serves
  // strongly consistent point reads.
  const shopOrdersPages = cachedLoader<ShopOrdersPageKey, Page<OrderModel>>(
    eachKey(<R>({ status, window, args }: ShopOrdersPageKey, then: Continuation<Page<OrderModel>, R>): Promise<R> =>
      readShardedPage(dynamo.doc, shopOrdersQuery(tableName, status, window), args, cursors).then(
        ({ page }) => settle(then, () => page),
        then.failed,
      ),
    ),
    ({ status, window, args }) => JSON.stringify([status, windowKey(window), argsKey(args)]),
  );

  /** Every category counter, by name (one partition: one Query, paged only past 1 MB). */
  const readCategories = async (): Promise<CategoryModel[]> => {
    const found: CategoryModel[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await dynamo.doc.send(
        rangeQuery(
          {
            TableName: tableName,
            KeyConditionExpression: 'PK = :pk',
            ExpressionAttributeValues: { ':pk': CATEGORIES_PK },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
            Limit: MAX_CATEGORIES - found.length,
          },
          CATEGORIES.read({}),
        ),
      );
      // A category whose last product moved away keeps its counter item, at zero: not listed.
      found.push(
        ...unmarshallItems(result.Items)
          .map(itemToCategory)
          .filter((category) => category.productCount > 0),
      );
      startKey = result.LastEvaluatedKey && unmarshallItem(result.LastEvaluatedKey);
    } while (startKey && found.length < MAX_CATEGORIES);
    return found;
  };
  const categories = cachedLoader<'all', CategoryModel[]>(
    eachKey(<R>(_all: 'all', then: Continuation<CategoryModel[], R>): Promise<R> =>
      readCategories().then((found) => then.done(found), then.failed),
    ),
    () => 'all',
  );

  const productsPages = cachedLoader<ProductsPageKey, Page<ProductModel>>(
    eachKey(
      <R>(
        { category, filter, order, args }: ProductsPageKey,
        then: Continuation<Page<ProductModel>, R>,
      ): Promise<R> => {
        const listing = productsQuery(tableName, category, filter, order);
        const shown = mapped(then, ({ page }: { page: Page<ProductModel> }) => {
          // GSI reads are eventually consistent; a category's GSI1 page always primed `items`
          // (its products are the ones shown), so the other listings do the same.
          primeAll(page.edges.map((edge) => edge.node));
          return page;
        });
        return listing.sharded
          ? readShardedPage(dynamo.doc, listing.query, args, cursors).then(shown.done, shown.failed)
          : readPage(dynamo.doc, listing.query, args, cursors, shown);
      },
    ),
    ({ category, filter, order = DEFAULT_PRODUCT_ORDER, args }) =>
      JSON.stringify([
        category,
        filter?.namePrefix?.toLowerCase(),
        filter?.inStock,
        filter?.minPriceCents,
        filter?.maxPriceCents,
        order.field,
        order.direction,
        argsKey(args),
      ]),
  );

  /** Products per category, from the counters (access pattern 13), one BatchGetItem for every category asked. */
  const categoryCounts = cachedLoader<string, number>(
    (names, then) =>
      batchGetItems(
        dynamo.doc,
        tableName,
        names.map(categoryCounterKey),
        { consistentRead: true },
        mapped(then, (rows: (Item | null)[]) => rows.map((row) => (row ? itemToCategory(row).productCount : 0))),
      ),
    (name) => name,
  );

  const reviewsPages = cachedLoader<ReviewsPageKey, Page<ReviewModel>>(
    eachKey(<R>({ productId, order, args }: ReviewsPageKey, then: Continuation<Page<ReviewModel>, R>): Promise<R> =>
      readPage(
        dynamo.doc,
        productReviewsQuery(tableName, productId, order),
        args,
        cursors,
        mapped(then, ({ page }: { page: Page<ReviewModel> }) => page),
      ),
    ),
    reviewsPageId,
  );

  /** A product's rating (null before its first review), read with the other point reads of its level. */
  const rating = (productId: string): Promise<ProductRatingModel | null> =>
    items.load(PRODUCT_RATING.keyOf({ productId })).then((found) => (found?.kind === 'ProductRating' ? found : null));

  /** Products whose item, rating and first reviews page this request already reads in one Query. */
  const fusedProducts = new Set<string>();
  /**
   * Starts the one read of product `productId`, its rating and its first reviews page `args`
   * (newest first, productPage.ts) and primes the `items` and `reviewsPages` loaders with its
   * parts, so that the product's look-up, Product.rating and Product.reviews find them. Must run
   * before the product is loaded. Returns false, reading nothing, where the page does not
   * qualify or the lever is off.
   */
  const productWithFirstReviews = (productId: string, order: ReviewOrder, args: ConnectionArgs): boolean => {
    if (!itemCollections) return false;
    const reviewsQuery = productReviewsQuery(tableName, productId, order);
    const size = fusableReviewsPage(order, args, reviewsQuery, cursors);
    if (size === null || fusedProducts.has(productId)) return false;
    fusedProducts.add(productId);
    const read = readProductPage(dynamo.doc, tableName, productId, size, reviewsQuery, cursors);
    const productKey = itemKeyId(NODES.Product.keyOf(productId));
    const ratingKey = itemKeyId(PRODUCT_RATING.keyOf({ productId }));
    const pageKey = reviewsPageId({ productId, order, args });
    // Shares of the one read, as userWithFirstOrders does: plain values once it is done.
    items.cache.expect(productKey, read, (found) => found.product);
    items.cache.expect(ratingKey, read, (found) => found.rating);
    reviewsPages.cache.expect(pageKey, read, (found) => found.reviews);
    read.then(
      (found) => {
        items.cache.settleShare(productKey, read, found.product);
        items.cache.settleShare(ratingKey, read, found.rating);
        reviewsPages.cache.settleShare(pageKey, read, found.reviews);
      },
      // Whoever reads the shares sees the failure; nobody else must (no unhandled rejection).
      () => undefined,
    );
    return true;
  };

  /** Users whose profile and first orders page this request already reads in one Query. */
  const fusedUsers = new Set<string>();
  /**
   * Starts the fused read of user `userId` and the orders page `args` (no status, no window)
   * and primes the `items` and `ordersPages` loaders with its two halves, so that the user's
   * look-up and User.orders find them instead of sending a BatchGetItem and a Query. Must run
   * before the user is loaded (a load already queued goes to BatchGetItem). Returns false,
   * reading nothing, where the page does not qualify or the lever is off.
   */
  const userWithFirstOrders = (userId: string, args: ConnectionArgs): boolean => {
    if (!itemCollections) return false;
    const ordersQuery = userOrdersQuery(tableName, userId, null);
    const size = fusablePage(null, args, ordersQuery, cursors);
    if (size === null || fusedUsers.has(userId)) return false;
    fusedUsers.add(userId);
    const read = readUserWithOrders(dynamo.doc, tableName, userId, size, ordersQuery, cursors);
    const userKey = itemKeyId(NODES.User.keyOf(userId));
    const pageKey = ordersPageId({ userId, status: null, window: {}, args });
    // The two halves are shares of the one read (as DataLoader's prime, an entry already there
    // stays), and plain values once it is done: one promise for the read, none per loader.
    items.cache.expect(userKey, read, (found) => found.user);
    ordersPages.cache.expect(pageKey, read, (found) => found.page);
    read.then(
      (found) => {
        items.cache.settleShare(userKey, read, found.user);
        primeAll(found.page.edges.map((edge) => edge.node));
        ordersPages.cache.settleShare(pageKey, read, found.page);
      },
      // Whoever reads the shares sees the failure; nobody else must (no unhandled rejection).
      () => undefined,
    );
    return true;
  };

  /** The node of `kind` with raw id `id` (null when missing, or when the item is of another kind). */
  const node = <K extends NodeKind>(kind: K, id: string): Promise<NodeOf<K> | null> =>
    items.load(identityOf(kind).keyOf(id)).then((found) => (found?.kind === kind ? (found as NodeOf<K>) : null));

  /**
   * The page loaders by the range their pages read: a write of an item that lies in a range (or
   * that its kind may be listed in) makes them read again. GSI2's shop-wide pages are left:
   * the index is eventually consistent, a read at once would not see the write anyway.
   */
  const pagesOf = new Map<Range<object>, readonly { clearAll(): unknown }[]>([
    [USER_ORDERS, [ordersPages]],
    [CATEGORY_PRODUCTS, [productsPages]],
    [SHOP_PRODUCTS, [productsPages]],
    [CATEGORIES, [categories, categoryCounts]],
    [PRODUCT_REVIEWS, [reviewsPages]],
  ] as [Range<object>, readonly { clearAll(): unknown }[]][]);

  return {
    items,
    userByEmail,
    ordersPages,
    shopOrdersPages,
    userWithFirstOrders,
    productsPages,
    reviewsPages,
    productWithFirstReviews,
    rating,
    categoryCounts,
    categories,
    node,
    user: (userId: string) => node('User', userId),
    order: (orderId: string) => node('Order', orderId),
    product: (productId: string) => node('Product', productId),
    review: (reviewId: string) => node('Review', reviewId),
    /**
     * Drops what this request cached of the items a write touched, and the pages that may list
     * them: the next read goes to DynamoDB.
     */
    forgetTouched: (keys: readonly ItemKey[]) => {
      for (const key of keys) items.clear(key);
      fusedUsers.clear();
      fusedProducts.clear();
      for (const range of new Set(keys.flatMap(rangesOfKey)))
        for (const pages of pagesOf.get(range) ?? []) pages.clearAll();
    },
    prime,
  };
}
