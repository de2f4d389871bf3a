/**
 * Writes the demo data. On start-up it runs once per table: a marker item records that it ran,
 * so a restart never writes it again. `npm run seed` rewrites it on demand (see reseedDemo).
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deleteItems, putItems } from '../db/batchWrite.js';
import {
  categoryToItem,
  EntityType,
  orderToDetailsItem,
  orderToUserItem,
  productToItem,
  userToItem,
} from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { BUYER, PRODUCT_RATING, PRODUCT_REVIEW, REVIEW } from '../table/entities/review.js';
import { STARS } from '../table/models.js';
import type { ProductRatingModel, ReviewModel } from '../table/models.js';
import { emailGuardKey, orderKey, PRODUCT_SALE_SK_PREFIX, productKey, SEED_MARKER_KEY, userPK } from '../table/keys.js';
import type { ItemKey } from '../table/keys.js';
import { demoData } from './demoData.js';
import type { DemoData } from './demoData.js';

/** The category counters of the demo products (written on the first seed only: see reseedDemo). */
export function demoCategoryItems(data: DemoData = demoData()): Item[] {
  const counts = new Map<string, number>();
  for (const product of data.products) counts.set(product.category, (counts.get(product.category) ?? 0) + 1);
  return [...counts].map(([name, productCount]) => categoryToItem({ kind: 'Category', name, productCount }));
}

/** The items of `reviews`: each review's details and its copy, and each reviewed product's rating, counted from them. */
export function reviewItems(reviews: readonly ReviewModel[]): Item[] {
  const ratings = new Map<string, ProductRatingModel>();
  for (const review of reviews) {
    const rating = ratings.get(review.productId) ?? {
      kind: 'ProductRating',
      productId: review.productId,
      count: 0,
      sum: 0,
      histogram: STARS.map(() => 0) as ProductRatingModel['histogram'],
    };
    rating.count += 1;
    rating.sum += review.rating;
    rating.histogram[review.rating - 1] = (rating.histogram[review.rating - 1] ?? 0) + 1;
    ratings.set(review.productId, rating);
  }
  return [
    ...reviews.flatMap((review) => [REVIEW.codec.toItem(review), PRODUCT_REVIEW.codec.toItem(review)]),
    ...[...ratings.values()].map(PRODUCT_RATING.codec.toItem),
  ];
}

export function demoItems(data: DemoData = demoData()): Item[] {
  return [
    ...data.users.flatMap((user) => [
      userToItem(user),
      { ...emailGuardKey(user.email), entityType: EntityType.EmailGuard, userId: user.userId },
    ]),
    ...data.products.map(productToItem),
    ...data.orders.flatMap((order) => [orderToDetailsItem(order), orderToUserItem(order)]),
    ...reviewItems(data.reviews),
  ];
}

async function writeDemo(
  doc: DynamoDBDocumentClient,
  tableName: string,
  data: DemoData,
  withCounters: boolean,
): Promise<number> {
  const items = [...demoItems(data), ...(withCounters ? demoCategoryItems(data) : [])];
  await putItems(doc, tableName, items);
  await doc.send(
    new PutCommand({
      TableName: tableName,
      Item: {
        ...SEED_MARKER_KEY,
        entityType: EntityType.Meta,
        seededAt: new Date().toISOString(),
        items: items.length,
      },
    }),
  );
  return items.length;
}

/** Seeds the demo data unless the marker says it was seeded before. Returns the number of items written. */
export async function seedDemoIfNeeded(doc: DynamoDBDocumentClient, tableName: string): Promise<number> {
  const marker = await doc.send(new GetCommand({ TableName: tableName, Key: SEED_MARKER_KEY, ConsistentRead: true }));
  if (marker.Item) return 0;
  // Deterministic items: if two servers race here, they write the same values.
  return writeDemo(doc, tableName, demoData(), true);
}

/**
 * Restores the demo data exactly: removes everything in the demo users' partitions (orders
 * placed since included, with their details items and current email guards), then writes the
 * demo items again. Products and users other than the demo ones are left alone.
 */
export async function reseedDemo(doc: DynamoDBDocumentClient, tableName: string): Promise<number> {
  const data = demoData();
  const stale: ItemKey[] = [];
  for (const user of data.users) {
    for (const item of await itemsOf(doc, tableName, userPK(user.userId))) {
      stale.push({ PK: String(item.PK), SK: String(item.SK) });
      if (item.entityType === EntityType.UserOrder) stale.push(orderKey(String(item.orderId)));
      if (item.entityType === EntityType.User) stale.push(emailGuardKey(String(item.email)));
    }
  }
  // soldCount markers and buyer records (src/streams/): without them the re-written demo orders
  // are counted anew. And the demo products' reviews, whoever wrote them, with their rating: the
  // demo reviews and the rating they make are written again.
  for (const product of data.products) {
    const pk = productKey(product.productId).PK;
    stale.push(...(await keysOf(doc, tableName, pk, PRODUCT_SALE_SK_PREFIX)));
    stale.push(...(await keysOf(doc, tableName, pk, BUYER.spec.key.SK.prefix)));
    stale.push(PRODUCT_RATING.keyOf({ productId: product.productId }));
    for (const item of await itemsOf(doc, tableName, pk, PRODUCT_REVIEW.spec.key.SK.prefix)) {
      stale.push({ PK: String(item.PK), SK: String(item.SK) }, REVIEW.keyOf({ reviewId: String(item.reviewId) }));
    }
  }
  await deleteItems(doc, tableName, stale);
  // The demo products are rewritten in place, so the category counters (which may also count
  // products created since) stay as they are.
  return writeDemo(doc, tableName, data, false);
}

/** Every item of partition `pk` (whose SK starts with `prefix`, when given). */
async function itemsOf(doc: DynamoDBDocumentClient, tableName: string, pk: string, prefix?: string): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: prefix ? 'PK = :pk AND begins_with(SK, :prefix)' : 'PK = :pk',
        ExpressionAttributeValues: prefix ? { ':pk': pk, ':prefix': prefix } : { ':pk': pk },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

const keysOf = async (doc: DynamoDBDocumentClient, tableName: string, pk: string, prefix: string): Promise<ItemKey[]> =>
  (await itemsOf(doc, tableName, pk, prefix)).map((item) => ({ PK: String(item.PK), SK: String(item.SK) }));
