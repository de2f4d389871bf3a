/**
 * Relay pages over a write-sharded index view: the same sort order spread over several
 * partitions (GSI2's shop-wide orders, src/table/keys.ts). A page reads every shard in
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
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../table/codecs.js';
import type { CursorCodec } from './cursor.js';
import { buildPage, planPage, READ_BUDGET } from './pagination.js';
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
  /** Inclusive bounds of a BETWEEN on the sort key. */
  window: { from: string; to: string };
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
    query.shardKeys.map((shardKey) => readShard(doc, query, shardKey, plan.cursor, forward, wanted)),
  );
  // Read order: ascending or descending sort key. Ties cannot occur within one view.
  const sortKey = (item: Item) => String(item[query.sortKeyName]);
  const inReadOrder = (a: Item, b: Item) => (sortKey(a) < sortKey(b) ? -1 : 1) * (forward ? 1 : -1);
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

/** Up to `wanted` items of one shard after `position`; a 1 MB cut is read on within READ_BUDGET. */
async function readShard<T>(
  doc: DynamoDBDocumentClient,
  query: ShardedPageQuery<T>,
  shardKey: string,
  position: Record<string, string> | undefined,
  forward: boolean,
  wanted: number,
): Promise<ShardRead> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined = position && {
    ...position,
    [query.partitionKeyName]: shardKey,
  };
  let result: QueryCommandOutput;
  let reads = 0;
  do {
    result = await doc.send(
      new QueryCommand({
        TableName: query.tableName,
        IndexName: query.indexName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': query.partitionKeyName, '#sk': query.sortKeyName },
        ExpressionAttributeValues: { ':pk': shardKey, ':from': query.window.from, ':to': query.window.to },
        ScanIndexForward: forward,
        ExclusiveStartKey: startKey,
        Limit: wanted - items.length,
      }),
    );
    reads += 1;
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (items.length < wanted && startKey && reads < READ_BUDGET.requests);
  const cut = items.length < wanted && startKey !== undefined;
  return { items, stoppedAt: cut ? startKey : undefined };
}
