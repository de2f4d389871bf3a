/**
 * `npm run bench:cache`: the response cache against the raw SDK chain, in one interleaved run on
 * DynamoDB Local. Three systems over HTTP: the raw chain (bench/rawChain.ts), tablegraph with the
 * cache off (RESPONSE_CACHE=off: the cold figure) and tablegraph with the cache on and its
 * in-process stream consumer (the warm figure: hits). Prints, for the category page and a user's
 * order page, p50/p99 of each and the hit p50 as a multiple of the raw chain's, the DynamoDB
 * requests of a hit, the hit rate of the catalog mix (95% reads of 50 products and 5 categories,
 * in two shapes, 5% stock writes straight with the SDK) and the cache's bytes after a flood of distinct
 * variables against RESPONSE_CACHE_MAX_BYTES. BENCH_CACHE_ROUNDS, BENCH_CACHE_REQUESTS size it.
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parseCommandLine } from '../src/cli.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { freePort, startLocalDynamo } from '../src/db/local.js';
import { productKey } from '../src/table/keys.js';
import { ChildServers } from '../test/support/childServers.js';
import { aProduct, anOrder, aUser, store } from '../test/support/factories.js';
import { tokenFor } from '../test/support/harness.js';
import { percentile } from '../test/support/load.js';
import { runLoad } from './load.js';
import { waitUntil } from '../test/support/waitUntil.js';
import { USER_ORDERS_QUERY } from './operations.js';
import { setSystemsRuntime, startChild } from './procs.js';
import type { Child } from './procs.js';

parseCommandLine({
  name: 'bench:cache',
  run: 'npm run bench:cache --',
  usage: `

The response cache against the raw SDK chain on its own DynamoDB Local: cold and warm latency, the
hit rate of a catalog mix with writes, the cache's bytes under a flood of distinct variables.
Takes no flags; sized by BENCH_CACHE_ROUNDS (5), BENCH_CACHE_REQUESTS (100), BENCH_CACHE_MIX
(2000), BENCH_CACHE_FLOOD (3000) and BENCH_CACHE_INDEX_HOLD_MS (1000).`,
});

const ROUNDS = Number(process.env.BENCH_CACHE_ROUNDS ?? 5);
const PER_ROUND = Number(process.env.BENCH_CACHE_REQUESTS ?? 100);
const MAX_BYTES = 2_000_000;
const CATEGORY_PAGE_QUERY = `query CategoryPage($category: String!) {
  products(category: $category, first: 20) {
    pageInfo { hasNextPage endCursor }
    edges { cursor node { id productId name price { amount currencyCode } stock description } }
  }
}`;
const PRODUCT_QUERY = `query Product($productId: ID!) { product(productId: $productId) { productId name stock } }`;
const FLOOD_QUERY = `query Flood($category: String!, $minPrice: String) {
  products(category: $category, first: 5, minPrice: $minPrice) { nodes { productId name } }
}`;

interface Answer {
  ms: number;
  status?: string;
  requests?: number;
}

/**
 * Asks `url`. `explain` asks for `extensions.cache` (its age makes every answer's bytes differ);
 * the latency rounds do without, as production does, and tell a hit by its 0 DynamoDB requests.
 */
async function ask(url: string, body: object, authorization?: string, explain = true): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify(explain ? { ...body, extensions: { cache: true } } : body),
  });
  const json = (await response.json()) as {
    errors?: unknown[];
    extensions?: { cache?: { status?: string }; cost?: { dynamodb?: { requests?: number } } };
  };
  const ms = performance.now() - started;
  if (!response.ok || json.errors) throw new Error(`${url}: ${response.status} ${JSON.stringify(json).slice(0, 300)}`);
  return { ms, status: json.extensions?.cache?.status, requests: json.extensions?.cost?.dynamodb?.requests };
}

const local = await startLocalDynamo();
// Its tablegraph servers are the tests' child processes, under tsx: the raw chain runs alike.
setSystemsRuntime('tsx');
const children = new ChildServers();
let raw: Child | undefined;
const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
const tableName = `cache-bench-${randomUUID()}`;
let failed = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.allSettled([children.killAll(), raw?.stop(), local.stop()]).then(() => process.exit(130));
  });
}
try {
  await ensureTable(dynamo.client, tableName, local.endpoint);
  const categories = [0, 1, 2, 3, 4].map((i) => `bench-cat-${i}`);
  const products = Array.from({ length: 50 }, (_, i) =>
    aProduct({ category: categories[i % 5] as string, stock: 100, priceCents: 1000 + i * 100 }),
  );
  const user = aUser();
  const orders = Array.from({ length: 20 }, (_, i) => anOrder(user, [products[i] as (typeof products)[number]]));
  await store(dynamo.doc, tableName, { users: [user], products, orders });
  const asUser = `Bearer ${await tokenFor(user.userId)}`;
  const cached = await children.start(local.endpoint, tableName, {
    NODE_ENV: 'development',
    RESPONSE_CACHE_MAX_BYTES: String(MAX_BYTES),
    // The hold-down after a change of an index range (docs/caching.md) decides the mix's hit rate.
    RESPONSE_CACHE_INDEX_HOLD_MS: process.env.BENCH_CACHE_INDEX_HOLD_MS ?? '1000',
  });
  const off = await children.start(local.endpoint, tableName, {
    NODE_ENV: 'development',
    RESPONSE_CACHE: 'off',
    STREAM_CONSUMER: 'false',
  });
  raw = await startChild({
    name: 'raw chain',
    entry: 'bench/rawChain.ts',
    env: { DYNAMODB_ENDPOINT: local.endpoint, TABLE_NAME: tableName },
    port: await freePort(),
    headers: {},
    readyMessage: 'raw chain ready',
  });
  const rawUrl = raw.url;
  const page = { operationName: 'CategoryPage', query: CATEGORY_PAGE_QUERY };
  await waitUntil(
    async () => (await ask(cached.url, { ...page, variables: { category: categories[0] } })).status !== 'bypass',
    { timeoutMs: 30_000, intervalMs: 100, what: 'a live invalidation feed' },
  );

  // Interleaved rounds: each system in turn, the same requests.
  const ops = [
    { name: 'category page', body: (i: number) => ({ ...page, variables: { category: categories[i % 5] } }) },
    {
      name: "a user's orders",
      body: () => ({ operationName: 'UserOrders', query: USER_ORDERS_QUERY, variables: { userId: user.userId } }),
    },
  ];
  const systems = [
    { name: 'raw chain', url: rawUrl },
    { name: 'cache off', url: off.url },
    { name: 'cache hit', url: cached.url },
  ];
  const results: Record<string, { ms: number[]; requests: number[]; statuses: Record<string, number> }> = {};
  for (const op of ops) {
    for (let i = 0; i < 5; i++) await ask(cached.url, op.body(i), asUser); // warm
    for (const system of systems) {
      for (let i = 0; i < 20; i++) await ask(system.url, op.body(i), asUser); // connections, JIT
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const op of ops) {
      for (const system of systems) {
        const key = `${op.name} / ${system.name}`;
        const into = (results[key] ??= { ms: [], requests: [], statuses: {} });
        for (let i = 0; i < PER_ROUND; i++) {
          const answer = await ask(system.url, op.body(i), asUser, false);
          into.ms.push(answer.ms);
          if (answer.requests !== undefined) into.requests.push(answer.requests);
          const seen = answer.requests === 0 ? 'no DynamoDB request' : 'read DynamoDB';
          into.statuses[seen] = (into.statuses[seen] ?? 0) + 1;
        }
      }
    }
  }
  console.info(`\nlatency over HTTP, ${ROUNDS} interleaved rounds of ${PER_ROUND} sequential requests each:`);
  for (const op of ops) {
    const rawP50 = percentile(results[`${op.name} / raw chain`]?.ms ?? [], 50);
    for (const system of systems) {
      const r = results[`${op.name} / ${system.name}`];
      if (!r) continue;
      const p50 = percentile(r.ms, 50);
      const requests = r.requests.length ? (r.requests.reduce((s, n) => s + n, 0) / r.requests.length).toFixed(2) : '-';
      console.info(
        `  ${op.name.padEnd(16)} ${system.name.padEnd(10)} p50 ${p50.toFixed(2).padStart(6)} ms  p99 ${percentile(r.ms, 99).toFixed(2).padStart(6)} ms  ${(p50 / rawP50).toFixed(2)}x raw  DynamoDB req/op ${requests}  ${JSON.stringify(r.statuses)}`,
      );
    }
  }

  // The same comparison with the main benchmark's client (autocannon, concurrency 1): a fetch()
  // client adds about as much per request as a hit costs the server, which pulls every ratio
  // towards 1. Rounds of 2 s, the systems in turn.
  const pids: Record<string, number> = {
    'raw chain': raw.pid,
    'cache off': off.node.pid,
    'cache hit': cached.node.pid,
  };
  const loadP50s: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const op of ops) {
      for (const system of systems) {
        let i = 0;
        const body = () => op.body(i++) as { operationName: string; query: string; variables: Record<string, unknown> };
        const first = body();
        const result = await runLoad({
          target: { url: system.url, pid: pids[system.name] as number },
          dbPid: local.pid,
          operationName: first.operationName,
          query: first.query,
          variables: () => body().variables,
          connections: 1,
          seconds: 2,
          headers: { authorization: asUser },
        });
        (loadP50s[`${op.name} / ${system.name}`] ??= []).push(result.latencyMs.p50);
        if (system.name === 'cache hit' && result.dynamodb.requests !== 0) {
          throw new Error(`${op.name}: the warm cache made ${result.dynamodb.requests} DynamoDB requests per answer`);
        }
      }
    }
  }
  console.info(`\nlatency with autocannon (c=1), ${ROUNDS} interleaved rounds of 2 s, median of the rounds' p50s:`);
  for (const op of ops) {
    const rawP50 = percentile(loadP50s[`${op.name} / raw chain`] ?? [], 50);
    for (const system of systems) {
      const p50 = percentile(loadP50s[`${op.name} / ${system.name}`] ?? [], 50);
      console.info(
        `  ${op.name.padEnd(16)} ${system.name.padEnd(10)} p50 ${p50.toFixed(2).padStart(6)} ms  ${(p50 / rawP50).toFixed(2)}x raw`,
      );
    }
  }

  // The catalog mix: 95% reads of 50 products and 5 category pages, 5% stock writes (SDK), each
  // changing one product and so its category's page. Two shapes of the reads: every one of the 55
  // pages equally often (the wording), and half of the reads on the 5 category pages.
  const productRead = (product: (typeof products)[number]) => ({
    operationName: 'Product',
    query: PRODUCT_QUERY,
    variables: { productId: product.productId },
  });
  const pages = [...products.map(productRead), ...categories.map((category) => ({ ...page, variables: { category } }))];
  const MIX = Number(process.env.BENCH_CACHE_MIX ?? 2000);
  const shapes = [
    { name: 'each of the 55 pages equally', read: (r: number) => pages[Math.floor(r * pages.length)] as object },
    {
      name: 'half of the reads on the 5 category pages',
      read: (r: number) =>
        r < 0.5
          ? productRead(products[Math.floor(r * 2 * products.length)] as (typeof products)[number])
          : { ...page, variables: { category: categories[Math.floor((r - 0.5) * 2 * categories.length)] } },
    },
  ];
  console.info('');
  for (const shape of shapes) {
    // Warm: each page read once, so the rate counts the writes' misses, not the first reads.
    for (const body of pages) await ask(cached.url, body);
    let reads = 0;
    let hits = 0;
    let writes = 0;
    let state = 42;
    const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < MIX; i++) {
      if (random() < 0.05) {
        const product = products[Math.floor(random() * products.length)] as (typeof products)[number];
        await dynamo.doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: productKey(product.productId),
            UpdateExpression: 'SET stock = stock - :one',
            ExpressionAttributeValues: { ':one': 1 },
          }),
        );
        writes++;
        continue;
      }
      const answer = await ask(cached.url, shape.read(random()));
      reads++;
      if (answer.status === 'hit') hits++;
    }
    console.info(
      `catalog mix (${shape.name}): ${reads} reads, ${writes} stock writes, hit rate ${((100 * hits) / reads).toFixed(1)}% (warm; RESPONSE_CACHE_INDEX_HOLD_MS ${process.env.BENCH_CACHE_INDEX_HOLD_MS ?? '1000'})`,
    );
  }

  // A flood of distinct variables: the cache must stay within RESPONSE_CACHE_MAX_BYTES.
  const FLOOD = Number(process.env.BENCH_CACHE_FLOOD ?? 3000);
  let maxBytes = 0;
  const bytesNow = async () => {
    const text = await (await fetch(`${cached.origin}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('tablegraph_response_cache_bytes'));
    return Number(line?.split(' ').at(-1) ?? NaN);
  };
  for (let i = 0; i < FLOOD; i++) {
    await ask(cached.url, {
      query: FLOOD_QUERY,
      variables: { category: categories[i % 5], minPrice: (i / 100).toFixed(2) },
    });
    if (i % 250 === 0) maxBytes = Math.max(maxBytes, await bytesNow());
  }
  maxBytes = Math.max(maxBytes, await bytesNow());
  console.info(
    `flood of ${FLOOD} distinct variables: cache bytes at most ${maxBytes} of RESPONSE_CACHE_MAX_BYTES ${MAX_BYTES} (${maxBytes <= MAX_BYTES ? 'within' : 'OVER'})`,
  );
  if (!(maxBytes <= MAX_BYTES)) failed = true;
} catch (error) {
  console.error(error);
  failed = true;
} finally {
  await children.killAll();
  await raw?.stop();
  dynamo.client.destroy();
  await local.stop();
}
process.exit(failed ? 1 : 0);
