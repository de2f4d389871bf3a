/**
 * 0001: the shop-wide order index and the counters.
 *
 * 1. `index`: GSI2 is created with UpdateTable if the table lacks it, and the run waits until
 *    it is ACTIVE (on Amazon DynamoDB that takes minutes on a large table).
 * 2. `items`: one Scan over the table, page by page, computing what the previous release did
 *    not write: the GSI2 keys of both copies of every order, each user's per-status order
 *    counts (recounted from the user's partition), and a counter item for every category seen.
 * 3. `categories`: each category's productCount, recounted from GSI1.
 *
 * Every write sets an absolute value computed from the items (never `+ 1`), and is skipped
 * when the item already holds it, so a page done twice (the run died after writing, before its
 * checkpoint) changes nothing, and a second run writes nothing at all. An order copy is only
 * given the keys of the status it was read with (a condition), so a status change committed
 * meanwhile by the new release, which writes the keys itself, is never overwritten.
 */
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { EntityType, shopOrderIndexKeys } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { GSI1, GSI2_ATTRIBUTES, GSI2_INDEX } from '../table/definition.js';
import {
  CATEGORIES_PK,
  categoryCounterKey,
  categoryGSI1PK,
  ORDER_SK_PREFIX,
  statusCountAttribute,
} from '../table/keys.js';
import { ORDER_STATUSES } from '../table/models.js';
import type { OrderStatus } from '../table/models.js';
import type { Checkpoint, Migration, MigrationRun } from './migration.js';
import { SHOP_ORDERS_INDEX } from './catalog.js';
import { ensureIndex, write } from './steps.js';

/** Items per Scan page: one checkpoint per page. */
export const SCAN_PAGE_SIZE = 100;
export const WRITES_IN_FLIGHT = 8;

export const shopOrdersMigration: Migration = {
  ...SHOP_ORDERS_INDEX,
  async run(run) {
    let checkpoint: Checkpoint = run.resumeFrom ?? { phase: 'index', scanned: 0, updated: 0 };
    if (checkpoint.phase === 'index') {
      await ensureIndex(run, GSI2_INDEX, GSI2_ATTRIBUTES);
      checkpoint = { phase: 'items', scanned: checkpoint.scanned, updated: checkpoint.updated };
      await run.checkpoint(checkpoint);
    }
    if (checkpoint.phase === 'items') {
      checkpoint = await backfillItems(run, checkpoint);
      checkpoint = { phase: 'categories', scanned: checkpoint.scanned, updated: checkpoint.updated };
      await run.checkpoint(checkpoint);
    }
    if (checkpoint.phase === 'categories') await recountCategories(run, checkpoint);
  },
};

async function backfillItems(run: MigrationRun, from: Checkpoint): Promise<Checkpoint> {
  let { scanned, updated } = from;
  let startKey = from.position;
  do {
    await run.limiter.before('read');
    const page = await run.doc.send(
      new ScanCommand({ TableName: run.tableName, ExclusiveStartKey: startKey, Limit: SCAN_PAGE_SIZE }),
    );
    run.limiter.spent('read', page.ConsumedCapacity?.CapacityUnits);
    const categories = new Set<string>();
    const pageItems = page.Items ?? [];
    // A few writes in flight at once: DynamoDB Local (and a table's latency) would otherwise
    // hold the backfill far below its capacity budget. Order does not matter: writes are absolute.
    for (let i = 0; i < pageItems.length; i += WRITES_IN_FLIGHT) {
      const chunk = pageItems.slice(i, i + WRITES_IN_FLIGHT);
      const written = await Promise.all(
        chunk.map(async (item) => {
          const update = await updateFor(run, item);
          return update ? write(run, update) : false;
        }),
      );
      scanned += chunk.length;
      updated += written.filter(Boolean).length;
    }
    for (const item of pageItems) {
      if (item.entityType === EntityType.Product && typeof item.category === 'string') categories.add(item.category);
    }
    for (const category of categories) {
      // Makes the category known to the recount phase; its count is set there.
      const counter = await write(run, {
        TableName: run.tableName,
        Key: categoryCounterKey(category),
        UpdateExpression: 'SET entityType = :type, #name = :name, productCount = if_not_exists(productCount, :zero)',
        ConditionExpression: 'attribute_not_exists(PK)',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':type': EntityType.Category, ':name': category, ':zero': 0 },
      });
      if (counter) updated += 1;
    }
    startKey = page.LastEvaluatedKey;
    const checkpoint: Checkpoint = { phase: 'items', position: startKey, scanned, updated };
    await run.checkpoint(checkpoint);
    run.progress(checkpoint);
  } while (startKey);
  return { phase: 'items', scanned, updated };
}

/** The update an item needs, or undefined when it is already right (or not concerned). */
async function updateFor(run: MigrationRun, item: Item): Promise<UpdateCommandInput | undefined> {
  const key = { PK: item.PK, SK: item.SK };
  if (item.entityType === EntityType.Order || item.entityType === EntityType.UserOrder) {
    const status = item.status as OrderStatus;
    const view = item.entityType === EntityType.Order ? 'ALL' : status;
    const wanted = shopOrderIndexKeys({ orderId: String(item.orderId), placedAt: String(item.placedAt) }, view);
    if (item.GSI2PK === wanted.GSI2PK && item.GSI2SK === wanted.GSI2SK) return undefined;
    return {
      TableName: run.tableName,
      Key: key,
      UpdateExpression: 'SET GSI2PK = :pk, GSI2SK = :sk',
      ConditionExpression: '#status = :status',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pk': wanted.GSI2PK, ':sk': wanted.GSI2SK, ':status': status },
    };
  }
  if (item.entityType === EntityType.User) {
    const counts = await countOrders(run, String(item.PK));
    if (ORDER_STATUSES.every((status) => item[statusCountAttribute(status)] === counts[status])) return undefined;
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    for (const status of ORDER_STATUSES) {
      names[`#${status}`] = statusCountAttribute(status);
      values[`:${status}`] = counts[status];
    }
    return {
      TableName: run.tableName,
      Key: key,
      UpdateExpression: `SET ${ORDER_STATUSES.map((status) => `#${status} = :${status}`).join(', ')}`,
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
  }
  return undefined;
}

/** A user's orders per status, counted from the copies in the user's partition. */
async function countOrders(run: MigrationRun, userPK: string): Promise<Record<OrderStatus, number>> {
  const counts = Object.fromEntries(ORDER_STATUSES.map((status) => [status, 0])) as Record<OrderStatus, number>;
  let startKey: Record<string, unknown> | undefined;
  do {
    await run.limiter.before('read');
    const page = await run.doc.send(
      new QueryCommand({
        TableName: run.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': userPK, ':prefix': ORDER_SK_PREFIX },
        ProjectionExpression: '#status',
        ExpressionAttributeNames: { '#status': 'status' },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    run.limiter.spent('read', page.ConsumedCapacity?.CapacityUnits);
    for (const item of page.Items ?? []) counts[item.status as OrderStatus] += 1;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return counts;
}

/** Sets each known category's productCount to the number of its products in GSI1. */
async function recountCategories(run: MigrationRun, from: Checkpoint): Promise<void> {
  let { scanned, updated } = from;
  let startKey = from.position;
  do {
    await run.limiter.before('read');
    const page = await run.doc.send(
      new QueryCommand({
        TableName: run.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': CATEGORIES_PK },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
        Limit: 25,
      }),
    );
    run.limiter.spent('read', page.ConsumedCapacity?.CapacityUnits);
    for (const counter of page.Items ?? []) {
      const name = String(counter.name);
      const count = await countProducts(run, name);
      scanned += 1;
      if (counter.productCount === count) continue;
      await write(run, {
        TableName: run.tableName,
        Key: categoryCounterKey(name),
        UpdateExpression: 'SET productCount = :count',
        ExpressionAttributeValues: { ':count': count },
      });
      updated += 1;
    }
    startKey = page.LastEvaluatedKey;
    const checkpoint: Checkpoint = { phase: 'categories', position: startKey, scanned, updated };
    await run.checkpoint(checkpoint);
    run.progress(checkpoint);
  } while (startKey);
}

async function countProducts(run: MigrationRun, category: string): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    await run.limiter.before('read');
    const page = await run.doc.send(
      new QueryCommand({
        TableName: run.tableName,
        IndexName: GSI1,
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': categoryGSI1PK(category) },
        Select: 'COUNT',
        ExclusiveStartKey: startKey,
      }),
    );
    run.limiter.spent('read', page.ConsumedCapacity?.CapacityUnits);
    count += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}
