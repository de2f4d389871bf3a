/**
 * Relay pages over a write-sharded index view: the same sort order spread over several
 * partitions (GSI2's shop-wide orders, GSI4 and GSI5's shop-wide products, src/table/entities/ranges.ts). A page reads every shard in
 * parallel, `size + 1` items each from the cursor on, and merges them: the first `size + 1`
 * of the union are exactly the first `size + 1` of the view, whichever shards they sit in.
 *
 * The cursor is the merge position, not one key per shard: the view's sort key
 * (`<placedAt>#<orderId>`) is unique across shards, so one position says where every shard
 * resumes. Each shard's ExclusiveStartKey is built from it (the shard's partition key, the
 * position, and the table key of the edge's item); DynamoDB does not require a start key to
 * name an existing item. The position also carries the edge's table key, so the cursor is the
 * item's own key like every other cursor here, signed and bound to the connection (which
 * includes the view and the window, keeping every position inside the key condition).
 */
import type { QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../table/codecs.js';
import { unmarshallItem } from './attributeValues.js';
import type { CursorCodec } from './cursor.js';
import { rangeQuery } from './dependencyRecord.js';
import type { RangeRead } from '../table/entities/entity.js';
import { buildPage, nextLimit, planPage, READ_BUDGET } from './pagination.js';
import type { ConnectionArgs, Page } from './pagination.js';

export interface ShardedPageQuery<T> {
  /** Identifies the connection; cursors are bound to it. */
  connection: string;
  tableName: string;
  indexName: string;
  partitionKeyName: string;
  sortKeyName: string;
  /** One partition key per shard. */
  shardKeys: readonly string[];
  /** What a read of each shard's range depends on, in shardKeys' order (src/table/entities/ranges.ts). */
  shardRanges: readonly RangeRead[];
  /** Narrows the sort key: inclusive bounds of a BETWEEN, or a begins_with; absent, the whole shard. */
  sortKeyCondition?: { between: { from: string; to: string } } | { beginsWith: string } | undefined;
  /** A FilterExpression (applied after Limit: each shard reads on within its share of READ_BUDGET). */
  filter?: { expression: string; values: Record<string, unknown> } | undefined;
  /** The connection's natural order (the `first` direction) is ascending sort key order. */
  ascending: boolean;
  decode: (item: Item) => T;
}

interface ShardRead {
  items: Item[];
  /** Set when DynamoDB stopped before `wanted` items with the shard unfinished (1 MB per response). */
  stoppedAt: Item | undefined;
}

/** Reads one page of the view: `shardKeys.length` parallel Queries when no shard's response is cut short. */
export async function readShardedPage<T>(
  doc: DynamoDBDocumentClient,
  query: ShardedPageQuery<T>,
  args: ConnectionArgs,
  codec: CursorCodec,
): Promise<{ page: Page<T>; items: Item[] }> {
  const cursorAttributes = ['PK', 'SK', query.sortKeyName];
  const plan = planPage(args, { connection: query.connection, keyAttributes: cursorAttributes }, codec);
  const wanted = plan.size + 1;
  const forward = plan.backward ? !query.ascending : query.ascending;
  const shards = await Promise.all(
    query.shardKeys.map((shardKey, shard) =>
      readShard(doc, query, shardKey, query.shardRanges[shard], plan.cursor, forward, wanted),
    ),
  );
  // Read order: ascending or descending sort key, compared as DynamoDB does (UTF-8 bytes,
  // which JavaScript's UTF-16 comparison contradicts past U+FFFF). Ties cannot occur within one view.
  const sortKey = (item: Item) => String(item[query.sortKeyName]);
  const inReadOrder = (a: Item, b: Item) =>
    Buffer.compare(Buffer.from(sortKey(a)), Buffer.from(sortKey(b))) * (forward ? 1 : -1);
  let merged = shards.flatMap((shard) => shard.items).sort(inReadOrder);

  // A shard cut short knows nothing past its last item: the merge is exact only up to there.
  const stops = shards.flatMap((shard) => (shard.stoppedAt ? [shard.stoppedAt] : [])).sort(inReadOrder);
  const stop = stops[0];
  if (stop) merged = merged.filter((item) => inReadOrder(item, stop) <= 0 || sortKey(item) === sortKey(stop));
  const cutShort = stop !== undefined && merged.length < wanted;
  const hasMore = merged.length > plan.size || cutShort;
  return buildPage(
    merged,
    plan,
    hasMore,
    { connection: query.connection, keyAttributes: cursorAttributes, decode: query.decode },
    codec,
    cutShort ? stop : undefined,
  );
}

/**
 * What one shard may read for a page. Unfiltered, a shard reads on only past DynamoDB's 1 MB
 * cut, within READ_BUDGET's requests. Filtered, the shards share READ_BUDGET's items, and each
 * may send a few requests, so a page stays within a bound whatever the filter skips.
 */
export function shardBudget(shards: number, filtered: boolean): { requests: number; items: number } {
  return filtered
    ? { requests: 3, items: Math.max(1, Math.floor(READ_BUDGET.items / shards)) }
    : { requests: READ_BUDGET.requests, items: Number.POSITIVE_INFINITY };
}

function sortKeyExpression(query: ShardedPageQuery<unknown>): { expression: string; values: Record<string, string> } {
  const condition = query.sortKeyCondition;
  if (condition === undefined) return { expression: '', values: {} };
  if ('beginsWith' in condition) {
    return { expression: ' AND begins_with(#sk, :prefix)', values: { ':prefix': condition.beginsWith } };
  }
  return {
    expression: ' AND #sk BETWEEN :from AND :to',
    values: { ':from': condition.between.from, ':to': condition.between.to },
  };
}

/** Up to `wanted` items of one shard after `position`, read on (past a 1 MB cut or a filter) within its budget. */
async function readShard<T>(
  doc: DynamoDBDocumentClient,
  query: ShardedPageQuery<T>,
  shardKey: string,
  range: RangeRead | undefined,
  position: Record<string, string> | undefined,
  forward: boolean,
  wanted: number,
): Promise<ShardRead> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined = position && {
    ...position,
    [query.partitionKeyName]: shardKey,
  };
  const sortKey = sortKeyExpression(query);
  const budget = shardBudget(query.shardKeys.length, query.filter !== undefined);
  let result: QueryCommandOutput;
  let reads = 0;
  let evaluated = 0;
  do {
    result = await doc.send(
      rangeQuery(
        {
          TableName: query.tableName,
          IndexName: query.indexName,
          KeyConditionExpression: `#pk = :pk${sortKey.expression}`,
          FilterExpression: query.filter?.expression,
          ExpressionAttributeNames: {
            '#pk': query.partitionKeyName,
            ...(sortKey.expression ? { '#sk': query.sortKeyName } : {}),
          },
          ExpressionAttributeValues: { ':pk': shardKey, ...sortKey.values, ...query.filter?.values },
          ScanIndexForward: forward,
          ExclusiveStartKey: startKey,
          Limit: query.filter
            ? nextLimit(wanted - items.length, evaluated, items.length, budget.items - evaluated)
            : wanted - items.length,
        },
        range,
      ),
    );
    reads += 1;
    evaluated += result.ScannedCount ?? result.Items?.length ?? 0;
    for (const map of result.Items ?? []) items.push(unmarshallItem(map));
    startKey = result.LastEvaluatedKey && unmarshallItem(result.LastEvaluatedKey);
  } while (items.length < wanted && startKey && reads < budget.requests && evaluated < budget.items);
  const cut = items.length < wanted && startKey !== undefined;
  return { items, stoppedAt: cut ? startKey : undefined };
}
