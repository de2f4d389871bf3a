/**
 * 0002: the catalog's browse indexes (GSI3 a category by price, GSI4 and GSI5 the whole shop
 * by name and by price, sharded; src/table/definition.ts).
 *
 * 1. `indexes`: each index the table lacks is created with UpdateTable, one at a time (DynamoDB
 *    takes one new GSI per call), and the run waits until it is ACTIVE.
 * 2. `products`: one Scan over the table, page by page; every product that lacks its browse
 *    keys (`GSI3SK`, `GSI4PK`) or holds stale ones gets them. The write is conditioned on the
 *    price it was computed from, so a price change committed meanwhile by the new release
 *    (which writes GSI3SK itself) is never overwritten. Absolute values: a page done twice
 *    changes nothing, a second run writes nothing.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { EntityType, productBrowseKeys } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { PRODUCT_INDEXES, tableDefinition } from '../table/definition.js';
import { PRODUCT_INDEXES_MIGRATION } from './catalog.js';
import { SCAN_PAGE_SIZE, WRITES_IN_FLIGHT } from './m0001ShopOrders.js';
import type { Checkpoint, Migration, MigrationRun } from './migration.js';
import { ensureIndex, write } from './steps.js';

export const productIndexesMigration: Migration = {
  ...PRODUCT_INDEXES_MIGRATION,
  async run(run) {
    let checkpoint: Checkpoint = run.resumeFrom ?? { phase: 'indexes', scanned: 0, updated: 0 };
    if (checkpoint.phase === 'indexes') {
      const attributes = tableDefinition(run.tableName).AttributeDefinitions ?? [];
      for (const index of PRODUCT_INDEXES) {
        // UpdateTable wants a definition of every key attribute of the new index, old ones too.
        const keys = new Set(index.KeySchema?.map((key) => key.AttributeName));
        await ensureIndex(
          run,
          index,
          attributes.filter((attribute) => keys.has(attribute.AttributeName)),
        );
      }
      checkpoint = { phase: 'products', scanned: 0, updated: 0 };
      await run.checkpoint(checkpoint);
    }
    if (checkpoint.phase === 'products') await backfillProducts(run, checkpoint);
  },
};

async function backfillProducts(run: MigrationRun, from: Checkpoint): Promise<void> {
  let { scanned, updated } = from;
  let startKey = from.position;
  do {
    await run.limiter.before('read');
    const page = await run.doc.send(
      new ScanCommand({
        TableName: run.tableName,
        ExclusiveStartKey: startKey,
        Limit: SCAN_PAGE_SIZE,
        FilterExpression: 'entityType = :product',
        ExpressionAttributeValues: { ':product': EntityType.Product },
      }),
    );
    run.limiter.spent('read', page.ConsumedCapacity?.CapacityUnits);
    const updates = (page.Items ?? []).flatMap((item) => updateFor(run, item) ?? []);
    for (let i = 0; i < updates.length; i += WRITES_IN_FLIGHT) {
      const written = await Promise.all(updates.slice(i, i + WRITES_IN_FLIGHT).map((update) => write(run, update)));
      updated += written.filter(Boolean).length;
    }
    scanned += page.ScannedCount ?? 0;
    startKey = page.LastEvaluatedKey;
    const checkpoint: Checkpoint = { phase: 'products', position: startKey, scanned, updated };
    await run.checkpoint(checkpoint);
    run.progress(checkpoint);
  } while (startKey);
}

/** The update a product needs, or undefined when its browse keys are right already. */
function updateFor(run: MigrationRun, item: Item): UpdateCommandInput | undefined {
  if (typeof item.price !== 'number' || typeof item.productId !== 'string') return undefined;
  const wanted = productBrowseKeys({ productId: item.productId, priceCents: item.price });
  if (item.GSI3SK === wanted.GSI3SK && item.GSI4PK === wanted.GSI4PK) return undefined;
  return {
    TableName: run.tableName,
    Key: { PK: item.PK, SK: item.SK },
    UpdateExpression: 'SET GSI3SK = :priceKey, GSI4PK = :shardKey',
    ConditionExpression: 'price = :price',
    ExpressionAttributeValues: { ':priceKey': wanted.GSI3SK, ':shardKey': wanted.GSI4PK, ':price': item.price },
  };
}
