/**
 * A fleet fed by the stream Lambda: two API instances (child processes) with their response
 * caches and the shared tier, no stream reader of their own (STREAM_CONSUMER=false), on a
 * Redis cluster of three primaries with everything signed; and the real stream handler invoked
 * with the real records of the table's stream on DynamoDB Local (lambdaEventSource.ts). No
 * consumer runs. The feed stays live across an idle stream, which invokes nothing (the
 * instances' probes are answered through it); the instances cache (hits above 0) and stay fresh
 * (no stale read) whoever writes; and once the function is no longer invoked, the instances
 * bypass within the feed timeout and serve nothing older when it comes back.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { streamHandlerFromEnv } from '../src/lambda/streams.js';
import { FEED_TIMEOUT_MS } from '../src/pipeline/responseCache/responseCache.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { aProduct, store } from './support/factories.js';
import { endpoint, tokenFor } from './support/harness.js';
import { LambdaEventSource } from './support/lambdaEventSource.js';
import { postGraphQL } from './support/load.js';
import { RedisCluster } from './support/redisCluster.js';
import { bypassAfterUnheardWrite, checkStaleReads, STOCK_QUERY } from './support/staleReads.js';
import { waitUntil } from './support/waitUntil.js';

const SECRET = 'the-signing-secret-of-the-lambda-fleet-test-0123456789';
const children = new ChildServers();
const product = aProduct({ category: 'lambda-fed', stock: 0 });
const variables = { productId: product.productId, category: product.category };
let redis: RedisCluster;
let dynamo: Dynamo;
let streams: DynamoDBStreamsClient;
let tableName: string;
let apis: ChildServer[];
let admin: string;
let lambda: Awaited<ReturnType<typeof streamHandlerFromEnv>>;
let source: LambdaEventSource | undefined;

/** A point read: no index, so no hold-down after a change keeps its answer from being stored. */
const POINT = 'query LambdaPoint($productId: ID!) { product(productId: $productId) { stock } }';

/** `extensions.cache` of `query` (the stock query by default) on `api`. */
async function explain(api: ChildServer, query = STOCK_QUERY): Promise<{ status?: string; reason?: string }> {
  const response = await fetch(api.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: admin },
    body: JSON.stringify({ query, variables, extensions: { cache: true } }),
  });
  return ((await response.json()) as { extensions?: { cache?: object } }).extensions?.cache ?? {};
}

const stockOn = async (api: ChildServer) =>
  ((await postGraphQL(api.url, admin, STOCK_QUERY, variables)).body?.data as { product: { stock: number } }).product
    .stock;

const liveOn = (api: ChildServer) =>
  waitUntil(async () => (await explain(api)).status !== 'bypass', {
    timeoutMs: 20_000,
    intervalMs: 100,
    what: 'a live invalidation feed from the stream Lambda',
  });

const startSource = async () => {
  source = await LambdaEventSource.start({ client: dynamo.client, streams, tableName, handler: lambda.handler });
};

beforeAll(async () => {
  admin = `Bearer ${await tokenFor('lambda-fleet-admin', 'admin')}`;
  tableName = `lambda-fleet-${randomUUID()}`;
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  streams = createStreamsClient({ endpoint: endpoint(), region: 'us-east-1' });
  [redis] = await Promise.all([RedisCluster.start(), ensureTable(dynamo.client, tableName, endpoint())]);
  await store(dynamo.doc, tableName, { products: [product] });
  const env = { ...redis.env, REDIS_SIGNING_SECRET: SECRET };
  lambda = await streamHandlerFromEnv({
    NODE_ENV: 'test',
    DYNAMODB_ENDPOINT: endpoint(),
    TABLE_NAME: tableName,
    ...env,
  });
  await startSource();
  apis = await Promise.all(
    [0, 1].map(() =>
      children.start(endpoint(), tableName, {
        ...env,
        STREAM_CONSUMER: 'false',
        NODE_ENV: 'development',
        RESPONSE_CACHE_SHARED: 'on',
      }),
    ),
  );
  for (const api of apis) await liveOn(api);
}, 120_000);

afterAll(async () => {
  await source?.stop();
  await children.killAll();
  await lambda?.close();
  streams?.destroy();
  await redis?.dispose();
  await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  dynamo?.client.destroy();
});

describe('a fleet fed by the stream Lambda', () => {
  // First, on a fleet that has heard of no write since it started: right after writes, the
  // instances may still be acting on their invalidations (a shared-tier bump Redis answers late
  // is a gap: a bypass until the next beat, then a flush), and the stream would not be idle yet.
  it('stays live across an idle stream, which invokes nothing: the instances’ probes are answered', async () => {
    for (const api of apis) {
      await waitUntil(async () => (await explain(api, POINT)).status === 'hit', { timeoutMs: 5000, what: 'a hit' });
    }
    const invocations = source?.invocations ?? 0;
    const idleUntil = performance.now() + FEED_TIMEOUT_MS * 1.5;
    const statuses = new Set<string | undefined>();
    while (performance.now() < idleUntil) {
      for (const api of apis) statuses.add((await explain(api, POINT)).status);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(statuses).toEqual(new Set(['hit']));
    // Only the probes invoked the function meanwhile: a few in all, not one per instance per read.
    const probes = (source?.invocations ?? 0) - invocations;
    console.info(`an idle ${FEED_TIMEOUT_MS * 1.5} ms: ${probes} invocations (the probes' records)`);
    expect(probes).toBeGreaterThan(0);
    expect(probes).toBeLessThanOrEqual(Math.ceil((FEED_TIMEOUT_MS * 1.5) / 1500) * apis.length);
  }, 30_000);

  it('caches and stays fresh: hits on every instance, no stale read after a write through the API or the SDK', async () => {
    const report = await checkStaleReads({
      urls: apis.map((api) => api.url),
      doc: dynamo.doc,
      tableName,
      productId: product.productId,
      category: product.category,
      admin,
      writes: 20,
    });
    console.info(`lambda-fed fleet (2 instances, cluster, shared tier): ${JSON.stringify(report)}`);
    expect(report.stale).toBe(0);
    expect(report.overdue).toBe(0);
    expect(report.hits).toBeGreaterThan(0);
  }, 120_000);

  it('bypasses within the feed timeout once the function is not invoked, and serves nothing older once it is', async () => {
    await source?.stop();
    source = undefined;
    const noticed = await bypassAfterUnheardWrite({
      doc: dynamo.doc,
      tableName,
      productId: product.productId,
      stock: 999_999,
      instances: apis,
      status: async (api) => (await explain(api)).status,
      timeoutMs: FEED_TIMEOUT_MS + 3000,
      what: 'a bypass once the function is not invoked',
    });
    console.info(`a dead Lambda feed noticed after ${noticed.map((ms) => Math.round(ms)).join(', ')} ms`);
    for (const ms of noticed) expect(ms).toBeLessThanOrEqual(FEED_TIMEOUT_MS + 1000);
    await startSource();
    for (const api of apis) {
      await liveOn(api);
      expect(await stockOn(api)).toBe(999_999);
    }
  }, 60_000);
});
