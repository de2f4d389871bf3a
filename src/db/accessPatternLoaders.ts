/**
 * How each of a request's loaders (loaders.ts) reads, one per access pattern: the function that
 * makes it, called by the request's `Loaders` the first time the request reads through it, and
 * the ids its cache keys pages by.
 */
import { itemToCategory, itemToUser } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { GSI1 } from '../table/definition.js';
import { itemToModel } from '../table/entities/registry.js';
import type { ItemModel } from '../table/entities/registry.js';
import { CATEGORIES, USER_BY_EMAIL } from '../table/entities/ranges.js';
import { MAX_CATEGORIES } from '../table/limits.js';
import { CATEGORIES_PK, categoryCounterKey, emailGSI1PK, itemKeyId } from '../table/keys.js';
import type { ItemKey } from '../table/keys.js';
import type { CategoryModel, OrderModel, ProductModel, ReviewModel, UserModel } from '../table/models.js';
import { unmarshallItem, unmarshallItems } from './attributeValues.js';
import { batchGetItems } from './batchGet.js';
import { CachedLoader, eachKey } from './cachedLoader.js';
import { mapped, settle } from './continuation.js';
import type { Continuation } from './continuation.js';
import { rangeQuery } from './dependencyRecord.js';
import type {
  DataSources,
  Loaders,
  OrdersPageKey,
  ProductsPageKey,
  ReviewsPageKey,
  ShopOrdersPageKey,
} from './loaders.js';
import { shopOrdersQuery, userOrdersQuery } from './pageQueries.js';
import type { PlacedWindow } from './pageQueries.js';
import { DEFAULT_PRODUCT_ORDER, productsQuery } from './productQueries.js';
import { readPage } from './pagination.js';
import type { ConnectionArgs, Page } from './pagination.js';
import { productReviewsQuery } from './productPage.js';
import { readShardedPage } from './shardedPages.js';

const argsKey = (args: ConnectionArgs) => JSON.stringify([args.first, args.after, args.last, args.before]);
const windowKey = (window: PlacedWindow = {}) => JSON.stringify([window.placedAfter, window.placedBefore]);
export const ordersPageId = ({ userId, status, window, args }: OrdersPageKey) =>
  JSON.stringify([userId, status, windowKey(window), argsKey(args)]);
export const reviewsPageId = ({ productId, order, args }: ReviewsPageKey) =>
  JSON.stringify([productId, order, argsKey(args)]);

/** Every point read ("item by key") whatever the entity type: one BatchGetItem per level. */
export const itemsLoader = ({ dynamo, tableName }: DataSources) =>
  new CachedLoader<ItemKey, ItemModel | null>(
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

export const userByEmailLoader = ({ dynamo, tableName }: DataSources, loaders: Loaders) =>
  new CachedLoader<string, UserModel | null>(
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
              loaders.prime(user);
              return user;
            }),
          then.failed,
        ),
    ),
    (email) => email,
  );

export const ordersPagesLoader = ({ dynamo, tableName, cursors }: DataSources, loaders: Loaders) =>
  new CachedLoader<OrdersPageKey, Page<OrderModel>>(
    eachKey(<R>({ userId, status, window, args }: OrdersPageKey, then: Continuation<Page<OrderModel>, R>): Promise<R> =>
      readPage(
        dynamo.doc,
        userOrdersQuery(tableName, userId, status, window),
        args,
        cursors,
        mapped(then, ({ page }: { page: Page<OrderModel> }) => {
          loaders.primeAll(page.edges.map((edge) => edge.node));
          return page;
        }),
      ),
    ),
    ordersPageId,
  );

// GSI2 is eventually consistent: its copies are not primed into `items`, which serves
// strongly consistent point reads.
export const shopOrdersPagesLoader = ({ dynamo, tableName, cursors }: DataSources) =>
  new CachedLoader<ShopOrdersPageKey, Page<OrderModel>>(
    eachKey(<R>({ status, window, args }: ShopOrdersPageKey, then: Continuation<Page<OrderModel>, R>): Promise<R> =>
      readShardedPage(dynamo.doc, shopOrdersQuery(tableName, status, window), args, cursors).then(
        ({ page }) => settle(then, () => page),
        then.failed,
      ),
    ),
    ({ status, window, args }) => JSON.stringify([status, windowKey(window), argsKey(args)]),
  );

/** Every category counter, by name (one partition: one Query, paged only past 1 MB). */
async function readCategories({ dynamo, tableName }: DataSources): Promise<CategoryModel[]> {
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
}

export const categoriesLoader = (sources: DataSources) =>
  new CachedLoader<'all', CategoryModel[]>(
    eachKey(<R>(_all: 'all', then: Continuation<CategoryModel[], R>): Promise<R> =>
      readCategories(sources).then((found) => then.done(found), then.failed),
    ),
    () => 'all',
  );

export const productsPagesLoader = ({ dynamo, tableName, cursors }: DataSources, loaders: Loaders) =>
  new CachedLoader<ProductsPageKey, Page<ProductModel>>(
    eachKey(
      <R>(
        { category, filter, order, args }: ProductsPageKey,
        then: Continuation<Page<ProductModel>, R>,
      ): Promise<R> => {
        const listing = productsQuery(tableName, category, filter, order);
        const shown = mapped(then, ({ page }: { page: Page<ProductModel> }) => {
          // GSI reads are eventually consistent; a category's GSI1 page always primed `items`
          // (its products are the ones shown), so the other listings do the same.
          loaders.primeAll(page.edges.map((edge) => edge.node));
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
export const categoryCountsLoader = ({ dynamo, tableName }: DataSources) =>
  new CachedLoader<string, number>(
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

export const reviewsPagesLoader = ({ dynamo, tableName, cursors }: DataSources) =>
  new CachedLoader<ReviewsPageKey, Page<ReviewModel>>(
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
