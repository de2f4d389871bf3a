/**
 * Scale: one user partition with many orders. The benchmark walks it through the server's own
 * cursors (100 orders a request) to a page deep inside, then measures that page against page 1
 * with the same query: DynamoDB requests per operation must be equal, p50 within 20%, and
 * memory must not grow with depth (pages are capped at 100).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import { createDynamo } from '../src/db/client.js';
import { SCALE_USER_ID } from './dataset.js';
import { percentiles, postGraphQL, runLoadWhenQuiet, warmUp } from './load.js';
import type { LoadResult, LoadTarget } from './load.js';
import { USER_ORDERS_QUERY, WALK_QUERY } from './operations.js';
import { memoryMb } from './procs.js';

export interface ScaleRun extends LoadResult {
  page: 'first' | 'deep';
}

export interface ScaleResult {
  orders: number;
  /** Orders before the deep page (where its cursor points). */
  depth: number;
  walk: { requests: number; seconds: number; dynamodbRequestsPerPage: number };
  rssBeforeMb: number;
  runs: ScaleRun[];
  /** The same page read by one Query straight from the benchmark: DynamoDB Local on its own. */
  direct: { read: string; p50: number; p95: number }[];
}

/**
 * Times the page-1 and deep-page Query directly against DynamoDB Local, once with the cursor
 * as ExclusiveStartKey (what the server sends) and once as a key condition (`SK < cursor`), to
 * tell the emulator's cost of skipping to a start key apart from the server's.
 */
async function directProbe(endpoint: string, tableName: string, depth: number) {
  const { client, doc } = createDynamo({ endpoint, region: 'us-east-1' });
  try {
    const pk = `USER#${SCALE_USER_ID}`;
    const base = {
      TableName: tableName,
      ExpressionAttributeValues: { ':pk': pk, ':prefix': 'ORDER#' },
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ScanIndexForward: false,
      ConsistentRead: true,
    };
    let startKey: Record<string, NativeAttributeValue> | undefined;
    let cursor: Record<string, NativeAttributeValue> | undefined;
    let seen = 0;
    while (!cursor) {
      const page = await doc.send(
        new QueryCommand({ ...base, ProjectionExpression: 'PK, SK', ExclusiveStartKey: startKey }),
      );
      const items = page.Items ?? [];
      if (seen + items.length >= depth) cursor = items[depth - seen - 1];
      seen += items.length;
      startKey = page.LastEvaluatedKey;
      if (!cursor && !startKey) throw new Error('the scale partition is shorter than the probe depth');
    }
    const deepSK = String(cursor.SK);
    const reads: [string, () => QueryCommand][] = [
      ['page 1', () => new QueryCommand({ ...base, Limit: 21 })],
      [
        `after ${depth}, cursor as ExclusiveStartKey`,
        () => new QueryCommand({ ...base, Limit: 21, ExclusiveStartKey: cursor }),
      ],
      [
        `after ${depth}, cursor as key condition (SK BETWEEN 'ORDER#' AND cursor)`,
        () =>
          new QueryCommand({
            ...base,
            KeyConditionExpression: 'PK = :pk AND SK BETWEEN :prefix AND :cursor',
            ExpressionAttributeValues: { ':pk': pk, ':prefix': 'ORDER#', ':cursor': deepSK },
            Limit: 22,
          }),
      ],
    ];
    const rows: { read: string; p50: number; p95: number }[] = [];
    for (const [read, command] of reads) {
      for (let i = 0; i < 20; i++) await doc.send(command());
      const times: number[] = [];
      for (let i = 0; i < 100; i++) {
        const started = performance.now();
        await doc.send(command());
        times.push(performance.now() - started);
      }
      const { p50, p95 } = percentiles(times);
      rows.push({ read, p50, p95 });
    }
    return rows;
  } finally {
    client.destroy();
  }
}

interface WalkPage {
  data: { user: { orders: { pageInfo: { hasNextPage: boolean; endCursor: string | null } } } };
  extensions?: { cost?: { dynamodb?: { requests: number } } };
}

export async function runScale(options: {
  endpoint: string;
  tableName: string;
  target: LoadTarget;
  dbPid: number;
  headers: Record<string, string>;
  orders: number;
  connections: number[];
  seconds: number;
  warmupSeconds: number;
  settle: () => Promise<void>;
  progress: (message: string) => void;
}): Promise<ScaleResult> {
  const { target, headers, orders, progress } = options;
  const depth = Math.max(100, Math.floor((orders * 0.9) / 100) * 100);
  const started = performance.now();
  let cursor: string | null = null;
  let walked = 0;
  let requests = 0;
  let dynamodbRequests = 0;
  while (walked < depth) {
    const page: WalkPage = await postGraphQL<WalkPage>(target.url, headers, 'Walk', WALK_QUERY, {
      userId: SCALE_USER_ID,
      after: cursor,
    });
    requests += 1;
    dynamodbRequests += page.extensions?.cost?.dynamodb?.requests ?? 0;
    const { pageInfo } = page.data.user.orders;
    if (!pageInfo.endCursor || !pageInfo.hasNextPage)
      throw new Error(`the scale partition ended after ${walked} orders`);
    cursor = pageInfo.endCursor;
    walked += 100;
  }
  const walk = {
    requests,
    seconds: (performance.now() - started) / 1000,
    dynamodbRequestsPerPage: dynamodbRequests / requests,
  };
  progress(`  walked ${walked} orders in ${requests} requests (${walk.seconds.toFixed(1)} s)`);

  const rssBeforeMb = memoryMb(target.pid).rss;
  const runs: ScaleRun[] = [];
  for (const connections of options.connections) {
    for (const page of ['first', 'deep'] as const) {
      const after = page === 'first' ? null : cursor;
      const spec = {
        target,
        dbPid: options.dbPid,
        operationName: 'UserOrders',
        query: USER_ORDERS_QUERY,
        variables: () => ({ userId: SCALE_USER_ID, after }),
        connections,
        headers,
      };
      await warmUp({ ...spec, seconds: options.warmupSeconds });
      await options.settle();
      const result = await runLoadWhenQuiet({ ...spec, seconds: options.seconds }, options.settle);
      runs.push({ page, ...result });
      progress(
        `  scale ${page.padEnd(5)} page c=${connections}: p50 ${result.latencyMs.p50.toFixed(1)} ms, ${result.dynamodb.requests} DynamoDB requests, RSS ${result.rssMb.toFixed(0)} MB`,
      );
    }
  }
  await options.settle();
  const direct = await directProbe(options.endpoint, options.tableName, depth);
  for (const row of direct) progress(`  DynamoDB Local alone, ${row.read}: p50 ${row.p50.toFixed(2)} ms`);
  return { orders, depth, walk, rssBeforeMb, runs, direct };
}
