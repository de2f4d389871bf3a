/**
 * Per-request loaders, one per access pattern (docs/design.md). The `items` loader serves every
 * point read ("item by key") whatever the entity type, so one level of a query costs one
 * BatchGetItem: an order's user and its products travel together, and so do the nodes of
 * `nodes(ids:)`. Queries have loaders of their own, which collapse identical reads (the same
 * page asked for twice under two aliases) into one request.
 *
 * Each loader reads two ways through one cache (cachedLoader.ts): `load`, one key at a time,
 * batched per tick (graphql-js's resolvers), and `readAll`, every key of a round at once with
 * one promise for the round (the planned executor's, src/pipeline/execution/plan/). Both send the same
 * requests and see what the other read. A request makes each loader on its first read through
 * it, so an operation pays for the loaders it uses, not for all of them; how each one reads is in
 * accessPatternLoaders.ts.
 */
import { identityOf, NODES, nodeKeyOf } from '../table/entities/nodes.js';
import type { NodeKind, NodeOf } from '../table/entities/nodes.js';
import type { Range } from '../table/entities/entity.js';
import { rangesOfKey } from '../table/entities/registry.js';
import type { ItemModel } from '../table/entities/registry.js';
import {
  CATEGORIES,
  CATEGORY_PRODUCTS,
  PRODUCT_REVIEWS,
  SHOP_ORDERS_ALL,
  SHOP_ORDERS_BY_STATUS,
  SHOP_PRODUCTS,
  USER_BY_EMAIL,
  USER_ORDERS,
} from '../table/entities/ranges.js';
import { PRODUCT_RATING } from '../table/entities/review.js';
import { itemKeyId } from '../table/keys.js';
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
import {
  categoriesLoader,
  categoryCountsLoader,
  itemsLoader,
  ordersPageId,
  ordersPagesLoader,
  productsPagesLoader,
  reviewsPageId,
  reviewsPagesLoader,
  shopOrdersPagesLoader,
  userByEmailLoader,
} from './accessPatternLoaders.js';
import type { CachedLoader } from './cachedLoader.js';
import type { Dynamo } from './client.js';
import type { CursorCodec } from './cursor.js';
import { userOrdersQuery } from './pageQueries.js';
import type { PlacedWindow } from './pageQueries.js';
import type { ProductFilter, ProductOrder } from './productQueries.js';
import { fusableReviewsPage, productReviewsQuery, readProductPage } from './productPage.js';
import type { ReviewOrder } from './productPage.js';
import type { ConnectionArgs, Page } from './pagination.js';
import type { SchemaGate } from './schemaGate.js';
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

/** A loader a write may make read again. */
interface Clearable {
  clearAll(): unknown;
}

/**
 * The loaders of one request (made per execution: never shared between requests or viewers).
 * Each loader is made the first time the request reads through it; one that is never made has
 * nothing cached, so a write has nothing of it to forget.
 */
export class Loaders {
  readonly #sources: DataSources;
  #items: CachedLoader<ItemKey, ItemModel | null> | undefined;
  #userByEmail: CachedLoader<string, UserModel | null> | undefined;
  #ordersPages: CachedLoader<OrdersPageKey, Page<OrderModel>> | undefined;
  #shopOrdersPages: CachedLoader<ShopOrdersPageKey, Page<OrderModel>> | undefined;
  #categories: CachedLoader<'all', CategoryModel[]> | undefined;
  #productsPages: CachedLoader<ProductsPageKey, Page<ProductModel>> | undefined;
  #categoryCounts: CachedLoader<string, number> | undefined;
  #reviewsPages: CachedLoader<ReviewsPageKey, Page<ReviewModel>> | undefined;
  /** Users whose profile and first orders page this request already reads in one Query. */
  #fusedUsers: Set<string> | undefined;
  /** Products whose item, rating and first reviews page this request already reads in one Query. */
  #fusedProducts: Set<string> | undefined;

  constructor(sources: DataSources) {
    this.#sources = sources;
  }

  get items(): CachedLoader<ItemKey, ItemModel | null> {
    return (this.#items ??= itemsLoader(this.#sources));
  }
  get userByEmail(): CachedLoader<string, UserModel | null> {
    return (this.#userByEmail ??= userByEmailLoader(this.#sources, this));
  }
  get ordersPages(): CachedLoader<OrdersPageKey, Page<OrderModel>> {
    return (this.#ordersPages ??= ordersPagesLoader(this.#sources, this));
  }
  get shopOrdersPages(): CachedLoader<ShopOrdersPageKey, Page<OrderModel>> {
    return (this.#shopOrdersPages ??= shopOrdersPagesLoader(this.#sources));
  }
  get categories(): CachedLoader<'all', CategoryModel[]> {
    return (this.#categories ??= categoriesLoader(this.#sources));
  }
  get productsPages(): CachedLoader<ProductsPageKey, Page<ProductModel>> {
    return (this.#productsPages ??= productsPagesLoader(this.#sources, this));
  }
  get categoryCounts(): CachedLoader<string, number> {
    return (this.#categoryCounts ??= categoryCountsLoader(this.#sources));
  }
  get reviewsPages(): CachedLoader<ReviewsPageKey, Page<ReviewModel>> {
    return (this.#reviewsPages ??= reviewsPagesLoader(this.#sources));
  }

  /** Makes later reads in this request see `node` (after a write, or from a Query's items). */
  prime(node: NodeModel): void {
    this.items.cache.put(itemKeyId(nodeKeyOf(node)), node);
  }

  primeAll(nodes: readonly NodeModel[]): void {
    for (const node of nodes) this.prime(node);
  }

  /** The node of `kind` with raw id `id` (null when missing, or when the item is of another kind). */
  node<K extends NodeKind>(kind: K, id: string): Promise<NodeOf<K> | null> {
    return this.items
      .load(identityOf(kind).keyOf(id))
      .then((found) => (found?.kind === kind ? (found as NodeOf<K>) : null));
  }

  user(userId: string): Promise<UserModel | null> {
    return this.node('User', userId);
  }
  order(orderId: string): Promise<OrderModel | null> {
    return this.node('Order', orderId);
  }
  product(productId: string): Promise<ProductModel | null> {
    return this.node('Product', productId);
  }
  review(reviewId: string): Promise<ReviewModel | null> {
    return this.node('Review', reviewId);
  }

  /** A product's rating (null before its first review), read with the other point reads of its level. */
  rating(productId: string): Promise<ProductRatingModel | null> {
    return this.items
      .load(PRODUCT_RATING.keyOf({ productId }))
      .then((found) => (found?.kind === 'ProductRating' ? found : null));
  }

  /**
   * Starts the one read of product `productId`, its rating and its first reviews page `args`
   * (newest first, productPage.ts) and primes the `items` and `reviewsPages` loaders with its
   * parts, so that the product's look-up, Product.rating and Product.reviews find them. Must run
   * before the product is loaded. Returns false, reading nothing, where the page does not
   * qualify or the lever is off.
   */
  productWithFirstReviews(productId: string, order: ReviewOrder, args: ConnectionArgs): boolean {
    const { dynamo, tableName, cursors, itemCollections = true } = this.#sources;
    if (!itemCollections) return false;
    const reviewsQuery = productReviewsQuery(tableName, productId, order);
    const size = fusableReviewsPage(order, args, reviewsQuery, cursors);
    const fused = (this.#fusedProducts ??= new Set());
    if (size === null || fused.has(productId)) return false;
    fused.add(productId);
    const read = readProductPage(dynamo.doc, tableName, productId, size, reviewsQuery, cursors);
    const productKey = itemKeyId(NODES.Product.keyOf(productId));
    const ratingKey = itemKeyId(PRODUCT_RATING.keyOf({ productId }));
    const pageKey = reviewsPageId({ productId, order, args });
    const items = this.items;
    const reviewsPages = this.reviewsPages;
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
  }

  /**
   * Starts the fused read of user `userId` and the orders page `args` (no status, no window)
   * and primes the `items` and `ordersPages` loaders with its two halves, so that the user's
   * look-up and User.orders find them instead of sending a BatchGetItem and a Query. Must run
   * before the user is loaded (a load already queued goes to BatchGetItem). Returns false,
   * reading nothing, where the page does not qualify or the lever is off.
   */
  userWithFirstOrders(userId: string, args: ConnectionArgs): boolean {
    const { dynamo, tableName, cursors, itemCollections = true } = this.#sources;
    if (!itemCollections) return false;
    const ordersQuery = userOrdersQuery(tableName, userId, null);
    const size = fusablePage(null, args, ordersQuery, cursors);
    const fused = (this.#fusedUsers ??= new Set());
    if (size === null || fused.has(userId)) return false;
    fused.add(userId);
    const read = readUserWithOrders(dynamo.doc, tableName, userId, size, ordersQuery, cursors);
    const userKey = itemKeyId(NODES.User.keyOf(userId));
    const pageKey = ordersPageId({ userId, status: null, window: {}, args });
    const items = this.items;
    const ordersPages = this.ordersPages;
    // The two halves are shares of the one read (as DataLoader's prime, an entry already there
    // stays), and plain values once it is done: one promise for the read, none per loader.
    items.cache.expect(userKey, read, (found) => found.user);
    ordersPages.cache.expect(pageKey, read, (found) => found.page);
    read.then(
      (found) => {
        items.cache.settleShare(userKey, read, found.user);
        this.primeAll(found.page.edges.map((edge) => edge.node));
        ordersPages.cache.settleShare(pageKey, read, found.page);
      },
      // Whoever reads the shares sees the failure; nobody else must (no unhandled rejection).
      () => undefined,
    );
    return true;
  }

  /**
   * The page loaders made so far by the range their pages read: a write of an item that lies in
   * a range (or that its kind may be listed in) makes them read again. GSI2's shop-wide pages and
   * the email look-up are left: they are read from indexes that are eventually consistent, so a
   * read at once would not see the write anyway. A range no case names (one declared later) makes
   * every page loader read again: a wasted read, never a page from before the write.
   */
  #pagesOf(range: Range<object>): readonly (Clearable | undefined)[] {
    switch (range) {
      case SHOP_ORDERS_ALL:
      case SHOP_ORDERS_BY_STATUS:
      case USER_BY_EMAIL:
        return [];
      case USER_ORDERS:
        return [this.#ordersPages];
      case CATEGORY_PRODUCTS:
      case SHOP_PRODUCTS:
        return [this.#productsPages];
      case CATEGORIES:
        return [this.#categories, this.#categoryCounts];
      case PRODUCT_REVIEWS:
        return [this.#reviewsPages];
      default:
        return this.#pages();
    }
  }

  /** Every page loader, made or not (undefined). */
  #pages(): readonly (Clearable | undefined)[] {
    return [this.#ordersPages, this.#productsPages, this.#categories, this.#categoryCounts, this.#reviewsPages];
  }

  /**
   * Drops what this request cached of the items a write touched, and the pages that may list
   * them: the next read goes to DynamoDB.
   */
  forgetTouched(keys: readonly ItemKey[]): void {
    const items = this.#items;
    if (items) for (const key of keys) items.clear(key);
    this.#fusedUsers?.clear();
    this.#fusedProducts?.clear();
    // No page read yet (a mutation's payload, most often): no page to forget, no range to work out.
    if (this.#pages().every((pages) => pages === undefined)) return;
    for (const range of new Set(keys.flatMap(rangesOfKey))) for (const pages of this.#pagesOf(range)) pages?.clearAll();
  }
}
