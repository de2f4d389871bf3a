/**
 * The response cache's shared tier in Redis (RESPONSE_CACHE_SHARED), on three API instances
 * fed by one consumer: an answer stored by one instance is served by another without a DynamoDB
 * request; a change (through the API or straight with the SDK) makes it invalid for every
 * instance; a viewer's answer is never served to another; after a gap in the feed nothing stored
 * before it is served; and a Redis outage makes the cache bypass, never fail. Everything is
 * signed with REDIS_SIGNING_SECRET: entries written into Redis by anyone else (forged, moved to
 * another viewer's key, written back after a change) are never served. A change is bumped in
 * Redis once, by the consumer that publishes it, not by every instance that hears it; a consumer
 * whose bumps fail still publishes, and the instances bump for it, so nothing stale is served.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry } from '../src/pipeline/responseCache/sharedEntry.js';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { cachePartitionPrefix } from '../src/events/redisNames.js';
import { productKey } from '../src/table/keys.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { anOrder, aProduct, aUser, store } from './support/factories.js';
import { endpoint, tokenFor } from './support/harness.js';
import { pollUntil } from './support/load.js';
import { RedisServer } from './support/redisServer.js';
import { checkStaleReads } from './support/staleReads.js';

const children = new ChildServers();
const product = aProduct({ category: 'shared-tier', stock: 10 });
const alice = aUser();
const bob = aUser();
const aliceOrder = anOrder(alice, [product]);
const STOCK = `query SharedStock($productId: ID!, $category: String!) {
  product(productId: $productId) { stock }
  products(category: $category, first: 20) { nodes { productId stock } }
}`;
const POINT = `query SharedPoint($productId: ID!) { product(productId: $productId) { stock } }`;
const ORDERS = `query SharedOrders($userId: ID!) {
  user(userId: $userId) { userId name orders(first: 5) { nodes { orderId } } }
}`;
let redis: RedisServer;
let dynamo: Dynamo;
let tableName: string;
let apis: ChildServer[];
let consumer: ChildServer;
let admin: string;
let raw: Redis;
const SECRET = 'the-signing-secret-of-the-shared-tier-test-0123456789';

interface Asked {
  status: number;
  data: Record<string, unknown> | null | undefined;
  errors: unknown[] | undefined;
  cache: { status?: string; tier?: string } | undefined;
  requests: number | undefined;
}

async function ask(api: ChildServer, query: string, variables: object, authorization = admin): Promise<Asked> {
  const response = await fetch(api.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ query, variables, extensions: { cache: true } }),
  });
  const body = (await response.json()) as {
    data?: Record<string, unknown> | null;
    errors?: unknown[];
    extensions?: { cache?: { status?: string; tier?: string }; cost?: { dynamodb?: { requests?: number } } };
  };
  return {
    status: response.status,
    data: body.data,
    errors: body.errors,
    cache: body.extensions?.cache,
    requests: body.extensions?.cost?.dynamodb?.requests,
  };
}

const stockIn = (asked: Asked) => (asked.data?.product as { stock: number } | undefined)?.stock;
const variables = { productId: product.productId, category: product.category };

/** A counter of `api`'s /metrics (0 before its first count). */
async function metric(api: ChildServer, series: string): Promise<number> {
  const text = await (await fetch(`${api.origin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return Number(line?.split(' ').at(-1) ?? 0);
}

/**
 * Asks `query` on `api` and waits until its answer is in Redis; returns the query as stored. A
 * change landing while it reads (the stream's records of the test data may still come in)
 * makes the store refused, so it tries again with the text changed by a comment: another
 * document, another key.
 */
async function storeVia(api: ChildServer, query: string, vars: object, authorization = admin): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const text = attempt === 0 ? query : `${query}\n# attempt ${attempt}`;
    const before = await metric(api, 'tablegraph_response_cache_shared_total{outcome="store"}');
    const asked = await ask(api, text, vars, authorization);
    expect(asked.cache?.status).toBe('miss');
    const stored = await pollUntil(
      () => metric(api, 'tablegraph_response_cache_shared_total{outcome="store"}'),
      (n) => n > before,
      // The store follows the answer; on a loaded machine it has taken more than 2 s.
      { timeoutMs: 10_000, intervalMs: 20, description: 'the answer stored in Redis' },
    ).then(
      () => true,
      (error: unknown) => {
        if (attempt >= 3) throw error;
        return false;
      },
    );
    if (stored) return text;
  }
}

/** Waits until every instance has evicted a change read from the stream after `counts` were taken. */
async function streamEvictionsPast(counts: number[]): Promise<void> {
  await Promise.all(
    apis.map((api, i) =>
      pollUntil(
        () => metric(api, 'tablegraph_response_cache_invalidation_lag_seconds_count'),
        (n) => n > (counts[i] ?? 0),
        { timeoutMs: 5000, intervalMs: 20, description: "the stream's eviction" },
      ),
    ),
  );
}
const lagCounts = () =>
  Promise.all(apis.map((api) => metric(api, 'tablegraph_response_cache_invalidation_lag_seconds_count')));

const liveOn = (api: ChildServer) =>
  pollUntil(
    () => ask(api, POINT, { productId: 'liveness-probe' }),
    (asked) => asked.cache?.status !== undefined && asked.cache.status !== 'bypass',
    { timeoutMs: 15_000, description: 'a live invalidation feed' },
  );

const setStock = (stock: number) =>
  dynamo.doc.send(
    new UpdateCommand({
      TableName: tableName,
      Key: productKey(product.productId),
      UpdateExpression: 'SET stock = :s, version = version + :one',
      ExpressionAttributeValues: { ':s': stock, ':one': 1 },
    }),
  );

/** The consumer, on Redis as `redisUrl` (another user's credentials, say). */
const startConsumer = async (redisUrl = redis.url) => {
  consumer = await children.startConsumer(endpoint(), tableName, {
    REDIS_URL: redisUrl,
    REDIS_SIGNING_SECRET: SECRET,
    STREAM_POLL_MS: '50',
  });
};

beforeAll(async () => {
  admin = `Bearer ${await tokenFor('shared-admin', 'admin')}`;
  tableName = `cache-shared-${randomUUID()}`;
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  [redis] = await Promise.all([RedisServer.start(), ensureTable(dynamo.client, tableName, endpoint())]);
  await store(dynamo.doc, tableName, { products: [product], users: [alice, bob], orders: [aliceOrder] });
  await startConsumer();
  const env = {
    REDIS_URL: redis.url,
    REDIS_SIGNING_SECRET: SECRET,
    STREAM_CONSUMER: 'false',
    NODE_ENV: 'development',
    RESPONSE_CACHE_SHARED: 'on',
  };
  apis = await Promise.all([0, 1, 2].map(() => children.start(endpoint(), tableName, env)));
  for (const api of apis) await liveOn(api);
  raw = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  raw.on('error', () => undefined);
}, 120_000);

afterAll(async () => {
  raw?.disconnect();
  await children.killAll();
  await redis?.kill();
  await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  dynamo?.client.destroy();
});

/** Entry keys of this table in Redis (not the tag versions, not the counter). */
async function entryKeys(): Promise<Set<string>> {
  const keys = await raw.keys(`tablegraph:rc:{${tableName}:p*`);
  return new Set(keys.filter((key) => !key.includes(':t:') && !key.endsWith(':seq')));
}

/**
 * Asks `query` on `api` until its answer is in Redis: the entry's key and text there, and the
 * text of the query that was stored (`query`, or `query` with a retry's comment when a change
 * raced the first store).
 */
async function storedEntry(
  api: ChildServer,
  query: string,
  vars: object,
  authorization = admin,
): Promise<[key: string, text: string, query: string]> {
  const before = await entryKeys();
  const stored = await storeVia(api, query, vars, authorization);
  const key = [...(await entryKeys())].find((k) => !before.has(k));
  const text = key && (await raw.get(key));
  if (!key || !text) throw new Error('no new entry in Redis');
  return [key, text, stored];
}

/** Shared-tier entries refused on `instances`, all reasons. */
const refusedOn = async (instances: ChildServer[]) =>
  (
    await Promise.all(
      instances.map(async (api) => {
        const text = await (await fetch(`${api.origin}/metrics`)).text();
        return text
          .split('\n')
          .filter((l) => l.startsWith('tablegraph_redis_refused_total{') && l.includes('source="shared-tier"'))
          .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
      }),
    )
  ).reduce((a, b) => a + b, 0);

describe('the shared tier in Redis', () => {
  it('serves on one instance, without a DynamoDB request, an answer another instance stored', async () => {
    const [a, b] = apis as [ChildServer, ChildServer];
    const query = await storeVia(a, STOCK, variables);
    const stored = await ask(a, query, variables);
    const served = await ask(b, query, variables);
    expect(served.cache).toMatchObject({ status: 'hit', tier: 'shared' });
    expect(served.requests).toBe(0);
    expect(served.data).toEqual(stored.data);
    // Kept in B's memory from then on.
    expect((await ask(b, query, variables)).cache).toMatchObject({ status: 'hit', tier: 'local' });
  });

  it('makes a change straight with the SDK invalid on every instance, one that never read it included', async () => {
    const [a, b, c] = apis as [ChildServer, ChildServer, ChildServer];
    const point = await storeVia(a, POINT, { productId: product.productId });
    const counts = await lagCounts();
    await setStock(21);
    await streamEvictionsPast(counts);
    for (const api of [a, b]) {
      await pollUntil(
        () => ask(api, STOCK, variables),
        (asked) => stockIn(asked) === 21,
        { timeoutMs: 1000, intervalMs: 10, description: 'the change shown' },
      );
    }
    // C never held POINT in memory; Redis has A's entry from before the change, no longer valid.
    const fromC = await ask(c, point, { productId: product.productId });
    expect(stockIn(fromC)).toBe(21);
  });

  it('makes a change through the API invalid for every instance before the writer has its answer', async () => {
    const [a, , c] = apis as [ChildServer, ChildServer, ChildServer];
    const other = await storeVia(
      c,
      `query SharedPointAgain($productId: ID!) { product(productId: $productId) { stock } }`,
      {
        productId: product.productId,
      },
    );
    const counts = await lagCounts();
    const { version } = (
      await dynamo.doc.send(
        new GetCommand({ TableName: tableName, Key: productKey(product.productId), ConsistentRead: true }),
      )
    ).Item as { version: number };
    const wrote = await ask(
      a,
      `mutation SharedRestock($productId: ID!, $v: Int!) {
        updateProduct(input: { productId: $productId, expectedVersion: $v, stock: 33 }) { userErrors { code } }
      }`,
      { productId: product.productId, v: version },
    );
    expect(wrote.data).toEqual({ updateProduct: { userErrors: [] } });
    // B never read `other`: at once, without waiting for the bus, Redis must not give it C's entry.
    const fromB = await ask(apis[1] as ChildServer, other, { productId: product.productId });
    expect(stockIn(fromB)).toBe(33);
    // The stream's record of the same change reaches every instance too (the next test stores new tags).
    await streamEvictionsPast(counts);
  });

  it("never serves a viewer's answer to another viewer or another role", async () => {
    const [a, b, c] = apis as [ChildServer, ChildServer, ChildServer];
    const asAlice = `Bearer ${await tokenFor(alice.userId)}`;
    const asBob = `Bearer ${await tokenFor(bob.userId)}`;
    const orders = await storeVia(a, ORDERS, { userId: alice.userId }, asAlice);
    const mine = await ask(b, orders, { userId: alice.userId }, asAlice);
    expect(mine.cache).toMatchObject({ tier: 'shared' });
    expect((mine.data?.user as { name: string }).name).toBe(alice.name);
    const bobs = await ask(c, orders, { userId: alice.userId }, asBob);
    expect(bobs.cache?.status).not.toBe('hit');
    expect(bobs.data?.user ?? null).toBeNull();
    const admins = await ask(c, orders, { userId: alice.userId });
    expect(admins.cache?.status).not.toBe('hit');
  });

  it('serves no entry written into Redis by anyone but an instance: 100 forged at the keys the instances use', async () => {
    const [a, b, c] = apis as [ChildServer, ChildServer, ChildServer];
    const forged = JSON.stringify({ product: { name: 'FORGED: call +1-555-0100 for a refund', stock: 424242 } });
    const refusedBefore = await refusedOn([b, c]);
    let served = 0;
    for (let i = 0; i < 100; i++) {
      const [key, stored, query] = await storedEntry(
        a,
        `query ForgedEntry($productId: ID!) { product(productId: $productId) { name stock } } # ${i}`,
        { productId: product.productId },
      );
      const decoded = decodeEntry(key, stored, { secret: undefined, now: Date.now(), maxAgeMs: 300_000 });
      if (!('entry' in decoded)) throw new Error(`the stored entry does not decode: ${JSON.stringify(decoded)}`);
      const { entry } = decoded;
      const lines = stored.split('\n');
      const variants = [
        // Planted from scratch, unsigned or signed with a guessed key.
        () => encodeEntry(key, { ...entry, json: forged }, entry.mark, entry.expiresAt, undefined),
        () => encodeEntry(key, { ...entry, json: forged }, entry.mark, entry.expiresAt, `${SECRET}?`),
        // The instance's own entry with its answer, its tags or its expiry changed.
        () => [...lines.slice(0, 7), forged].join('\n'),
        () => ['', ...lines.slice(1)].join('\n'),
        () => [...lines.slice(0, 3), String(Date.now() + 86_400_000), ...lines.slice(4)].join('\n'),
      ];
      await raw.set(key, variants[i % variants.length]!(), 'KEEPTTL');
      const asked = await ask(i % 2 ? b : c, query, { productId: product.productId });
      if (JSON.stringify(asked.data).includes('FORGED') || asked.cache?.tier === 'shared') served++;
    }
    expect(served).toBe(0);
    expect((await refusedOn([b, c])) - refusedBefore).toBe(100);
  }, 120_000);

  it("serves no replayed entry: 50 moved to another viewer's key, 50 written back with their tags' versions after a change", async () => {
    const [a, b, c] = apis as [ChildServer, ChildServer, ChildServer];
    const asAlice = `Bearer ${await tokenFor(alice.userId)}`;
    const asBob = `Bearer ${await tokenFor(bob.userId)}`;
    let served = 0;
    // Alice's answer written over Bob's, at the key of the same document and Bob's own variables.
    for (let i = 0; i < 50; i++) {
      // Both entries must be of one document, whose key differs only by its viewer. Bob's store
      // is retried as another document when it was refused (a change raced it) or when the
      // instance gave up on Redis (a read or store past the tier's 250 ms bound, which a busy
      // machine reaches): then the pair is stored again, as a document of its own.
      let pair: { alices: string; bobsKey: string; query: string } | undefined;
      for (let attempt = 0; !pair; attempt++) {
        const text = `${ORDERS} # moved ${i}${attempt === 0 ? '' : ` again ${attempt}`}`;
        const [, alices, query] = await storedEntry(a, text, { userId: alice.userId }, asAlice);
        const [bobsKey, , bobsQuery] = await storedEntry(a, query, { userId: bob.userId }, asBob);
        if (bobsQuery === query) pair = { alices, bobsKey, query };
        else if (attempt >= 3) throw new Error(`Bob's entry of pair ${i} was stored as another document 4 times`);
      }
      const { alices, bobsKey, query } = pair;
      await raw.set(bobsKey, alices, 'KEEPTTL');
      const asked = await ask(b, query, { userId: bob.userId }, asBob);
      if (JSON.stringify(asked.data).includes(alice.name)) served++;
    }
    // Entries read before a change, written back with the versions their tags had then.
    const stock = stockIn(await ask(a, POINT, { productId: product.productId })) as number;
    const saved: { key: string; text: string; query: string; tags: [string, string | null][] }[] = [];
    for (let i = 0; i < 50; i++) {
      const [key, text, query] = await storedEntry(
        a,
        `query Revived($productId: ID!) { product(productId: $productId) { stock } } # ${i}`,
        { productId: product.productId },
      );
      const tags = text.split('\n')[0]!.split(' ');
      const prefix = key.slice(0, key.lastIndexOf(':') + 1);
      saved.push({
        key,
        text,
        query,
        tags: await Promise.all(
          tags.map(async (tag) => [tag, await raw.get(`${prefix}t:${tag}`)] as [string, string | null]),
        ),
      });
    }
    const counts = await lagCounts();
    await setStock(stock + 100);
    await streamEvictionsPast(counts);
    for (const { key, text, query, tags } of saved) {
      const prefix = key.slice(0, key.lastIndexOf(':') + 1);
      await raw.set(key, text, 'PX', 60_000);
      for (const [tag, version] of tags) if (version) await raw.set(`${prefix}t:${tag}`, version, 'PX', 60_000);
      const asked = await ask(c, query, { productId: product.productId });
      if (stockIn(asked) !== stock + 100) served++;
    }
    expect(served).toBe(0);
  }, 120_000);

  it('serves nothing stored before a gap in the feed once the feed is back', async () => {
    const [a, b] = apis as [ChildServer, ChildServer];
    await setStock(40);
    await pollUntil(
      () => ask(a, POINT, { productId: product.productId }),
      (asked) => stockIn(asked) === 40 && asked.cache?.status === 'hit',
      { timeoutMs: 5000, intervalMs: 20, description: 'the new stock cached' },
    );
    await children.kill(consumer);
    // A change nobody hears of: the entries in Redis still look valid.
    await setStock(41);
    await pollUntil(
      () => ask(b, POINT, { productId: product.productId }),
      (asked) => asked.cache?.status === 'bypass',
      { timeoutMs: 10_000, intervalMs: 50, description: 'a bypass after the consumer died' },
    );
    await startConsumer();
    for (const api of apis) {
      await liveOn(api);
      expect(stockIn(await ask(api, POINT, { productId: product.productId }))).toBe(41);
    }
  }, 60_000);

  it('bypasses the cache while Redis is down, and answers every query', async () => {
    await redis.kill();
    for (const api of apis) {
      const answers: Asked[] = [];
      await pollUntil(
        async () => {
          const asked = await ask(api, STOCK, variables);
          answers.push(asked);
          return asked;
        },
        (asked) => asked.cache?.status === 'bypass',
        { timeoutMs: 10_000, intervalMs: 20, description: 'a bypass while Redis is down' },
      );
      for (const asked of answers) {
        expect(asked.status).toBe(200);
        expect(asked.errors).toBeUndefined();
        expect(stockIn(asked)).toBe(41);
      }
    }
    await redis.restart();
    for (const api of apis) await liveOn(api);
    const [a, b] = apis as [ChildServer, ChildServer];
    const query = await storeVia(
      a,
      `query SharedStockAfterOutage($productId: ID!, $category: String!) {
      product(productId: $productId) { stock }
      products(category: $category, first: 20) { nodes { productId stock } }
    }`,
      variables,
    );
    expect((await ask(b, query, variables)).cache).toMatchObject({ status: 'hit', tier: 'shared' });
  }, 60_000);
});

describe('who bumps the shared tier', () => {
  /** The invalidation counter of the tier's one partition (one redis-server). */
  const counter = async () => Number((await raw.get(`${cachePartitionPrefix(tableName, 0)}seq`)) ?? 0);

  it('bumps a change read from the stream once, before any instance hears it: none of the three bumps it again', async () => {
    await Promise.all(apis.map(liveOn));
    const counts = await lagCounts();
    const before = await counter();
    await setStock(50);
    await streamEvictionsPast(counts);
    // Three instances heard it; the consumer bumped it, in one batch of one record.
    expect((await counter()) - before).toBe(1);
  });

  it('serves nothing stale when the consumer cannot bump: it publishes without the flag, and every instance bumps', async () => {
    // A Redis user that may publish but not run the tier's scripts: the consumer's bumps fail.
    const password = 'no-bumps-for-this-consumer-0123456789';
    await raw.call(
      'ACL',
      'SETUSER',
      'nobumps',
      'on',
      `>${password}`,
      '~*',
      '&*',
      '+@all',
      '-evalsha',
      '-eval',
      '-script',
    );
    // Stopped, it hands its lease over at once: the next one reads the stream from the start.
    await children.stop(consumer);
    await startConsumer(redis.url.replace('redis://', `redis://nobumps:${password}@`));
    await consumer.node.waitForLog((line) => line.msg === 'stream consumer started', 'the stream read');
    const counts = await lagCounts();
    await setStock(60);
    await streamEvictionsPast(counts);
    for (const api of apis) await liveOn(api);
    const before = await counter();
    const report = await checkStaleReads({
      urls: apis.map((api) => api.url),
      doc: dynamo.doc,
      tableName,
      productId: product.productId,
      category: product.category,
      admin,
      writes: 6,
    });
    expect(report).toMatchObject({ stale: 0, overdue: 0 });
    // The check ran on cached answers, the consumer said its bumps failed, and each change read
    // from the stream was bumped by each of the three instances.
    expect(report.hits).toBeGreaterThan(0);
    expect(consumer.node.logs.some((line) => line.msg.startsWith('publisher bumps of the shared cache tier'))).toBe(
      true,
    );
    expect((await counter()) - before).toBeGreaterThanOrEqual(3 * report.writes);
  }, 60_000);
});
