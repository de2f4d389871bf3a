/**
 * Writes the demo data. On start-up it runs once per table: a marker item records that it ran,
 * so a restart never writes it again. `npm run seed` rewrites it on demand (see reseedDemo).
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deleteItems, putItems } from '../db/batchWrite.js';
import { EntityType, orderToDetailsItem, orderToUserItem, productToItem, userToItem } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { emailGuardKey, orderKey, SEED_MARKER_KEY, userPK } from '../table/keys.js';
import type { ItemKey } from '../table/keys.js';
import { demoData } from './demoData.js';
import type { DemoData } from './demoData.js';

export function demoItems(data: DemoData = demoData()): Item[] {
  return [
    ...data.users.flatMap((user) => [
      userToItem(user),
      { ...emailGuardKey(user.email), entityType: EntityType.EmailGuard, userId: user.userId },
    ]),
    ...data.products.map(productToItem),
    ...data.orders.flatMap((order) => [orderToDetailsItem(order), orderToUserItem(order)]),
  ];
}

async function writeDemo(doc: DynamoDBDocumentClient, tableName: string, data: DemoData): Promise<number> {
  const items = demoItems(data);
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
  return writeDemo(doc, tableName, demoData());
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
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': userPK(user.userId) },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        stale.push({ PK: String(item.PK), SK: String(item.SK) });
        if (item.entityType === EntityType.UserOrder) stale.push(orderKey(String(item.orderId)));
        if (item.entityType === EntityType.User) stale.push(emailGuardKey(String(item.email)));
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  await deleteItems(doc, tableName, stale);
  return writeDemo(doc, tableName, data);
}
