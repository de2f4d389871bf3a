/**
 * A hung Redis does not hold a write up: the shared tier's bump of a mutation's tags is waited
 * for at most WRITE_BUMP_WAIT_MS, and one that has not landed by then is a gap in the writer's
 * feed (it bypasses its cache until its feed proves the invalidations flow again, and flushes).
 * Here the tier's own command timeout is a minute, so a mutation that waited for its bump would
 * wait a minute; redis-server is stopped with SIGSTOP, as a stalled host would leave it. (The
 * fault soak, test/support/cacheFaults.ts, measures the same on three instances fed by Redis.)
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharedTier } from '../src/pipeline/responseCache/sharedTier.js';
import { WRITE_BUMP_WAIT_MS } from '../src/pipeline/responseCache/responseCache.js';
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
  it('answers without waiting for the bump, and counts the bump that did not land in time as a gap', async () => {
    const variables = { productId: product.productId };
    await waitUntil(async () => (await ask(QUERY, variables)).cache?.status === 'hit', {
      timeoutMs: 10_000,
      what: 'the answer cached',
    });
    const { version } = (await ask(QUERY, variables)).data.product as { version: number };
    redis.pause();
    const wrote = await ask(
      `mutation HungRestock($productId: ID!, $v: Int!) {
        updateProduct(input: { productId: $productId, expectedVersion: $v, stock: 7 }) { userErrors { code } }
      }`,
      { ...variables, v: version },
    );
    console.info(
      `a mutation on a stopped Redis answered in ${wrote.ms.toFixed(1)} ms (bump wait ${WRITE_BUMP_WAIT_MS} ms)`,
    );
    expect(wrote.data).toEqual({ updateProduct: { userErrors: [] } });
    // A bump that had been waited for would have taken the tier's command timeout: a minute.
    expect(wrote.ms).toBeLessThan(10_000);
    // Counted as a gap: this instance's feed went down (here the in-process consumer revives it at
    // its next poll; on Redis the next heartbeat is what proves Redis answers again).
    expect(server.app.cache?.stats.slowBumps).toBe(1);
    const after = await ask(QUERY, variables);
    expect(after.cache?.status).not.toBe('hit');
    expect(after.data.product.stock).toBe(7);
    redis.resume();
    await waitUntil(async () => (await ask(QUERY, variables)).cache?.status === 'hit', {
      timeoutMs: 10_000,
      what: 'the cache serving again',
    });
    expect((await ask(QUERY, variables)).data.product.stock).toBe(7);
  });
});
