/**
 * A hung Redis does not hold a write up: the shared tier's bump of a mutation's tags is sent
 * before the answer leaves but not waited for, and one that fails is a gap in the writer's feed
 * (it bypasses its cache until its feed proves the invalidations flow again, and flushes). Here
 * the tier's bound on a bump is a minute, so a mutation that waited for its bump would wait a
 * minute; redis-server is stopped with SIGSTOP, as a stalled host would leave it. (The fault
 * soak, test/support/cacheFaults.ts, measures the same on three instances fed by Redis.)
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharedTier } from '../src/pipeline/responseCache/sharedTier.js';
import { isIndexTag } from '../src/table/dependencies.js';
import { aProduct, store } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { RedisServer } from './support/redisServer.js';
import { waitUntil } from './support/waitUntil.js';

const product = aProduct({ category: 'hung', stock: 1 });
const QUERY = `query Hung($productId: ID!) { product(productId: $productId) { stock version } }`;
let redis: RedisServer;
let shared: SharedTier;
let server: TestServer;
let admin: string;

beforeAll(async () => {
  redis = await RedisServer.start();
  shared = new SharedTier({
    redis: { url: redis.url },
    tableName: `hung-${process.pid}`,
    maxAgeMs: 300_000,
    holdDownMs: 0,
    maxEntryBytes: 100_000,
    isIndexTag,
    log: pino({ level: 'silent' }),
    timeoutMs: 60_000,
    bumpTimeoutMs: 60_000,
  });
  await shared.start();
  server = await startTestServer({
    streams: true,
    responseCache: { maxBytes: 1_000_000, maxAgeSeconds: 300, indexHoldMs: 0, shared: true },
    sharedCache: shared,
    explainCache: true,
  });
  await store(server.dynamo.doc, server.tableName, { products: [product] });
  await server.app.consumer?.waitUntilCaughtUp();
  admin = `Bearer ${await tokenFor('hung-admin', 'admin')}`;
}, 60_000);

afterAll(async () => {
  redis?.resume();
  await server?.stop();
  await shared?.stop();
  await redis?.kill();
});

const ask = async (query: string, variables: object) => {
  const started = performance.now();
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: admin },
    body: JSON.stringify({ query, variables, extensions: { cache: true } }),
  });
  const body = (await response.json()) as { data?: any; extensions?: { cache?: { status: string; reason?: string } } };
  return { ms: performance.now() - started, data: body.data, cache: body.extensions?.cache };
};

describe('a mutation on a hung Redis', () => {
  it('answers without waiting for its bump, and counts the bump that failed as a gap', async () => {
    const variables = { productId: product.productId };
    await waitUntil(async () => (await ask(QUERY, variables)).cache?.status === 'hit', {
      timeoutMs: 10_000,
      what: 'the answer cached',
    });
    const restock = `mutation HungRestock($productId: ID!, $v: Int!, $stock: Int!) {
      updateProduct(input: { productId: $productId, expectedVersion: $v, stock: $stock }) { userErrors { code } }
    }`;
    const versionNow = async () => ((await ask(QUERY, variables)).data.product as { version: number }).version;
    const before = await ask(restock, { ...variables, v: await versionNow(), stock: 6 });
    const version = await versionNow();
    redis.pause();
    const wrote = await ask(restock, { ...variables, v: version, stock: 7 });
    console.info(`a mutation answered in ${before.ms.toFixed(1)} ms with Redis up, ${wrote.ms.toFixed(1)} ms stopped`);
    expect(before.data).toEqual({ updateProduct: { userErrors: [] } });
    expect(wrote.data).toEqual({ updateProduct: { userErrors: [] } });
    // A bump that had been waited for would have taken the tier's bound on a bump: a minute.
    expect(wrote.ms).toBeLessThan(10_000);
    const after = await ask(QUERY, variables);
    // Its own bump still in flight, the instance reads neither its evicted entry nor the tier.
    expect(after.cache?.status).not.toBe('hit');
    expect(after.data.product.stock).toBe(7);
    expect(server.app.cache?.stats.failedBumps).toBe(0);
    // Redis dies while hung: the bump fails, and that is a gap in the writer's feed.
    await redis.kill();
    await waitUntil(() => (server.app.cache?.stats.failedBumps ?? 0) > 0, {
      timeoutMs: 10_000,
      what: 'the failed bump',
    });
    await redis.restart();
    await waitUntil(async () => (await ask(QUERY, variables)).cache?.status === 'hit', {
      timeoutMs: 15_000,
      what: 'the cache serving again',
    });
    expect((await ask(QUERY, variables)).data.product.stock).toBe(7);
  });
});
