/**
 * `npm run soak:cache`: the stale-read soak of the response cache. Three API instances on Redis
 * (STREAM_CONSUMER=false), one standalone consumer, DynamoDB Local; a checker makes
 * SOAK_WRITES writes (default 1,000), alternately updateProduct through an instance and a
 * direct SDK update, and after each one reads every instance until it shows the write, then
 * reads again (test/support/staleReads.ts). Prints the stale count and the lag distribution, and
 * exits 1 on a stale read or a p99 over 1 s. Bounded: it stops after SOAK_MAX_MINUTES (default
 * 20) of writing and reports what it did by then.
 */
import { randomUUID } from 'node:crypto';
import { parseCommandLine } from '../src/cli.js';
import { startLocalDynamo } from '../src/db/local.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { ChildServers } from '../test/support/childServers.js';
import { aProduct, store } from '../test/support/factories.js';
import { tokenFor } from '../test/support/harness.js';
import { waitUntil } from '../test/support/waitUntil.js';
import { RedisServer } from '../test/support/redisServer.js';
import { checkStaleReads, STOCK_QUERY, summarize } from '../test/support/staleReads.js';
import type { StaleCheckReport } from '../test/support/staleReads.js';

parseCommandLine({
  name: 'soak:cache',
  run: 'npm run soak:cache --',
  usage: `

The stale-read soak of the response cache: three API instances on Redis, one consumer, DynamoDB
Local; exits 1 on a stale read or a p99 lag over 1 s. Takes no flags; SOAK_WRITES (1000) and
SOAK_MAX_MINUTES (20) size it.`,
});

const writes = Number(process.env.SOAK_WRITES ?? 1000);
const maxMinutes = Number(process.env.SOAK_MAX_MINUTES ?? 20);
const chunk = 50;

const local = await startLocalDynamo();
const redis = await RedisServer.start();
const children = new ChildServers();
const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
const tableName = `cache-soak-${randomUUID()}`;
let failed = false;
// Ctrl-C (or a timeout's SIGTERM) still stops the children it started.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.allSettled([children.killAll(), redis.kill(), local.stop()]).then(() => process.exit(130));
  });
}
try {
  await ensureTable(dynamo.client, tableName, local.endpoint);
  const product = aProduct({ category: 'soak', stock: 0 });
  await store(dynamo.doc, tableName, { products: [product] });
  const admin = `Bearer ${await tokenFor('cache-soak', 'admin')}`;
  await children.startConsumer(local.endpoint, tableName, { REDIS_URL: redis.url, STREAM_POLL_MS: '50' });
  const apiEnv = { REDIS_URL: redis.url, STREAM_CONSUMER: 'false', NODE_ENV: 'development' };
  const apis = await Promise.all([0, 1, 2].map(() => children.start(local.endpoint, tableName, apiEnv)));
  const variables = { productId: product.productId, category: product.category };
  for (const api of apis) {
    await waitUntil(
      async () => {
        const response = await fetch(api.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: admin },
          body: JSON.stringify({ query: STOCK_QUERY, variables, extensions: { cache: true } }),
        });
        const answer = (await response.json()) as { extensions?: { cache?: { status?: string } } };
        return answer.extensions?.cache?.status !== 'bypass';
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'a live invalidation feed' },
    );
  }
  const started = performance.now();
  const reports: StaleCheckReport[] = [];
  const apiLags: number[] = [];
  const sdkLags: number[] = [];
  let done = 0;
  while (done < writes && performance.now() - started < maxMinutes * 60_000) {
    const n = Math.min(chunk, writes - done);
    const report = await checkStaleReads({
      urls: apis.map((api) => api.url),
      doc: dynamo.doc,
      tableName,
      admin,
      writes: n,
      ...variables,
      onLag: (viaApi, ms) => (viaApi ? apiLags : sdkLags).push(ms),
    });
    reports.push(report);
    done += n;
    console.info(
      `${done} writes, ${Math.round((performance.now() - started) / 1000)} s, stale so far ${reports.reduce((s, r) => s + r.stale, 0)}`,
    );
  }
  const total = {
    writes: done,
    reads: reports.reduce((s, r) => s + r.reads, 0),
    stale: reports.reduce((s, r) => s + r.stale, 0),
    hits: reports.reduce((s, r) => s + r.hits, 0),
    apiLagMs: summarize(apiLags),
    sdkLagMs: summarize(sdkLags),
    allLagMs: summarize([...apiLags, ...sdkLags]),
    seconds: Math.round((performance.now() - started) / 1000),
  };
  console.info(
    `response cache soak, 3 instances + consumer + Redis on DynamoDB Local:\n${JSON.stringify(total, null, 2)}`,
  );
  failed = total.stale > 0 || total.allLagMs.p99 > 1000 || done < writes;
  if (done < writes)
    console.info(`stopped after ${maxMinutes} min (SOAK_MAX_MINUTES) with ${done} of ${writes} writes`);
} catch (error) {
  console.error(error);
  failed = true;
} finally {
  await children.killAll();
  await redis.kill();
  dynamo.client.destroy();
  await local.stop();
}
process.exit(failed ? 1 : 0);
