/**
 * The response cache's bound under faults, on three API instances fed by Redis (signed with a
 * secret, the shared tier on) and one consumer: under a lost invalidation, a tag outside the
 * pattern, forged and replayed heartbeats, a Redis outage and a hung Redis, no instance shows a
 * value older than a write for longer than RESPONSE_CACHE_MAX_AGE + 1 s after it
 * (test/support/cacheFaults.ts). `npm run soak:cache` runs the same faults with 500+ writes.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { CacheFaultRig } from './support/cacheFaults.js';
import type { Fault } from './support/cacheFaults.js';
import { ChildServers } from './support/childServers.js';
import { endpoint } from './support/harness.js';
import { summarize } from './support/staleReads.js';
import { RedisServer } from './support/redisServer.js';
import { waitUntil } from './support/waitUntil.js';
import { FEED_TIMEOUT_MS } from '../src/pipeline/responseCache/responseCache.js';

const MAX_AGE_SECONDS = 3;
const children = new ChildServers();
let redis: RedisServer;
let dynamo: Dynamo;
let tableName: string;
let rig: CacheFaultRig;

/** A counter of an instance's /metrics, summed over the series whose labels contain `labels`. */
async function metric(origin: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

beforeAll(async () => {
  tableName = `cache-faults-${randomUUID()}`;
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  [redis] = await Promise.all([RedisServer.start(), ensureTable(dynamo.client, tableName, endpoint())]);
  rig = await CacheFaultRig.start({
    endpoint: endpoint(),
    tableName,
    dynamo,
    children,
    redis,
    maxAgeSeconds: MAX_AGE_SECONDS,
    seed: 35,
  });
}, 120_000);

afterAll(async () => {
  await rig?.stop();
  await children.killAll();
  await redis?.kill();
  await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  dynamo?.client.destroy();
});

describe('the maximum age', () => {
  it('bounds every hit: no answer is served older than RESPONSE_CACHE_MAX_AGE, whatever else happens', async () => {
    const api = rig.apis[0]!;
    const ages: number[] = [];
    // No write: only the maximum age can end the entry (a miss), and no hit may be older.
    await waitUntil(
      async () => {
        const cache = await rig.explain(api);
        if (cache.status === 'hit') ages.push(cache.age ?? Infinity);
        return ages.length > 0 && cache.status === 'miss';
      },
      { timeoutMs: (MAX_AGE_SECONDS + 5) * 1000, intervalMs: 100, what: 'the entry expired' },
    );
    expect(Math.max(...ages)).toBeLessThanOrEqual(MAX_AGE_SECONDS);
  }, 30_000);
});

describe('the response cache under faults', () => {
  it.each<[Fault, number, number]>([
    ['lost-invalidation', 3, 0],
    ['redis-outage', 3, 1],
    ['hung-redis', 3, 1],
  ])(
    'shows no instance a value older than a write past the maximum age + 1 s: %s',
    async (fault, sdkWrites, apiWrites) => {
      const run = await rig.run(fault, sdkWrites, apiWrites);
      console.info(
        `${fault}: lag ${JSON.stringify(summarize(run.lagsMs))} ms, beyond ${rig.boundMs} ms: ${run.beyondBound}` +
          (run.mutationMs.length ? `, mutations ${run.mutationMs.map(Math.round).join(', ')} ms` : '') +
          (run.forgedHeartbeats ? `, heartbeats forged ${run.forgedHeartbeats}` : ''),
      );
      expect(run.lagsMs).toHaveLength(3 * (sdkWrites + apiWrites));
      expect(run.beyondBound).toBe(0);
    },
    120_000,
  );

  it('applies a batch with a key outside the API’s id rules at once: its tag is valid, nothing is widened, no wait for the maximum age', async () => {
    // The declarations map a key they cannot read in full to a tag the receivers accept (a
    // digest of the odd id), so a batch with an import's key is applied as sent. Widening a tag
    // that another publisher sends outside the pattern is the receivers' own rule (unit tests).
    const widened = await metric(rig.apis[0]!.origin, 'tablegraph_response_cache_faults_total', 'fault="widened"');
    const run = await rig.run('bad-tag', 3);
    console.info(`bad-tag: lag ${JSON.stringify(summarize(run.lagsMs))} ms`);
    expect(run.beyondBound).toBe(0);
    expect(Math.max(...run.lagsMs)).toBeLessThan(MAX_AGE_SECONDS * 1000);
    expect(await metric(rig.apis[0]!.origin, 'tablegraph_response_cache_faults_total', 'fault="widened"')).toBe(
      widened,
    );
  }, 60_000);

  it('refuses every forged and replayed heartbeat, counted: a dead feed is not kept alive', async () => {
    const refused = () =>
      Promise.all(
        rig.apis.map((api) => metric(api.origin, 'tablegraph_redis_refused_total', 'source="invalidations"')),
      );
    const before = await refused();
    const run = await rig.run('forged-heartbeat', 2, 0, async () => {
      // With only forged heartbeats coming, every instance stops serving from its cache.
      for (const api of rig.apis) {
        await waitUntil(async () => (await rig.cacheStatus(api)) === 'bypass', {
          timeoutMs: FEED_TIMEOUT_MS + 3000,
          intervalMs: 100,
          what: 'a bypass while only forged heartbeats come',
        });
      }
    });
    const after = await refused();
    console.info(
      `forged-heartbeat: lag ${JSON.stringify(summarize(run.lagsMs))} ms, heartbeats forged ${run.forgedHeartbeats}`,
    );
    expect(run.beyondBound).toBe(0);
    expect(run.forgedHeartbeats).toBeGreaterThanOrEqual(300);
    // Each instance refused every one (a replay, an unsigned copy, a guessed key) it received.
    after.forEach((count, i) => expect(count - (before[i] ?? 0)).toBe(run.forgedHeartbeats));
  }, 60_000);
});
