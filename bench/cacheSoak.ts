/**
 * `npm run soak:cache`: the staleness soak of the response cache under faults. Three API
 * instances on Redis (STREAM_CONSUMER=false, the shared tier on, everything signed with
 * REDIS_SIGNING_SECRET), one standalone consumer, DynamoDB Local (test/support/cacheFaults.ts).
 * SOAK_REDIS=cluster runs it on a Redis cluster of three primaries (REDIS_MODE=cluster) instead
 * of one redis-server; its outage and hang then take the whole cluster.
 *
 * A seeded schedule of segments, each under one fault or none: a lost invalidation, a tag
 * outside the pattern, forged and replayed heartbeats, a Redis outage, a hung Redis (SIGSTOP).
 * Each segment makes direct SDK writes (and one `updateProduct` through an instance per ten of
 * them, one per three where Redis hangs) and reads every instance after each until it shows the write. Prints, per fault and in
 * all, the lag distribution and the stale answers past the bound (RESPONSE_CACHE_MAX_AGE + 1 s:
 * goal 0), and the mutations' latency; exits 1 on any past the bound.
 *
 * SOAK_WRITES direct writes at least (default 500), SOAK_SEED (default 35) fixes the schedule,
 * SOAK_MAX_AGE the maximum age in seconds (default 5), SOAK_MAX_MINUTES bounds the run (default 30).
 */
import { randomUUID } from 'node:crypto';
import { parseCommandLine } from '../src/cli.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import { seededRandom } from '../src/seed/seededRandom.js';
import { CacheFaultRig, FAULTS } from '../test/support/cacheFaults.js';
import type { Fault, FaultRun } from '../test/support/cacheFaults.js';
import { ChildServers } from '../test/support/childServers.js';
import { startRedis } from '../test/support/testRedis.js';
import { summarize } from '../test/support/staleReads.js';

parseCommandLine({
  name: 'soak:cache',
  run: 'npm run soak:cache --',
  usage: `

The staleness soak of the response cache under faults: three API instances on Redis, one consumer,
DynamoDB Local; a seeded schedule of faults (a lost invalidation, a tag outside the pattern, forged
heartbeats, a Redis outage, a hung Redis) between quiet segments. Exits 1 on any stale answer past
RESPONSE_CACHE_MAX_AGE + 1 s. Takes no flags; SOAK_WRITES (500), SOAK_SEED (35), SOAK_MAX_AGE (5 s)
and SOAK_MAX_MINUTES (30) size it.`,
});

const writes = Number(process.env.SOAK_WRITES ?? 500);
const seed = Number(process.env.SOAK_SEED ?? 35);
const maxAgeSeconds = Number(process.env.SOAK_MAX_AGE ?? 5);
const maxMinutes = Number(process.env.SOAK_MAX_MINUTES ?? 30);
const redisMode = process.env.SOAK_REDIS === 'cluster' ? 'cluster' : 'single';

/** The schedule: every fault once per round, in a seeded order, between segments without one; 20-60 writes a segment. */
function schedule(random: () => number): { fault: Fault; writes: number }[] {
  const segments: { fault: Fault; writes: number }[] = [];
  let planned = 0;
  while (planned < writes) {
    const round: Fault[] = [...FAULTS];
    for (let i = round.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [round[i], round[j]] = [round[j] as Fault, round[i] as Fault];
    }
    for (const fault of round.flatMap((f): Fault[] => ['none', f])) {
      const n = Math.min(20 + Math.floor(random() * 41), writes - planned);
      if (n <= 0) break;
      segments.push({ fault, writes: n });
      planned += n;
    }
  }
  return segments;
}

const local = await startLocalDynamo();
const redis = await startRedis(redisMode);
const children = new ChildServers();
const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
const tableName = `cache-soak-${randomUUID()}`;
let failed = false;
// Ctrl-C (or a timeout's SIGTERM) still stops the children it started.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.allSettled([children.killAll(), redis.dispose(), local.stop()]).then(() => process.exit(130));
  });
}
let rig: CacheFaultRig | undefined;
try {
  await ensureTable(dynamo.client, tableName, local.endpoint);
  rig = await CacheFaultRig.start({
    endpoint: local.endpoint,
    tableName,
    dynamo,
    children,
    redis,
    maxAgeSeconds,
    seed,
  });
  const segments = schedule(seededRandom(seed));
  const started = performance.now();
  const runs: FaultRun[] = [];
  let done = 0;
  for (const { fault, writes: n } of segments) {
    if (performance.now() - started > maxMinutes * 60_000) break;
    // More mutations where Redis hangs: what a hung Redis adds to a write is one of the targets.
    const run = await rig.run(fault, n, Math.max(1, Math.round(n / (fault === 'hung-redis' ? 3 : 10))));
    runs.push(run);
    done += n;
    console.info(
      `${done} writes, ${Math.round((performance.now() - started) / 1000)} s: ${fault} x${n}, lag p99 ${summarize(run.lagsMs).p99} ms, past the bound ${run.beyondBound}`,
    );
  }
  const byFault = Object.fromEntries(
    (['none', ...FAULTS] as Fault[]).map((fault) => {
      const of = runs.filter((run) => run.fault === fault);
      return [
        fault,
        {
          segments: of.length,
          sdkWrites: of.reduce((s, r) => s + r.sdkWrites, 0),
          apiWrites: of.reduce((s, r) => s + r.apiWrites, 0),
          pastTheBound: of.reduce((s, r) => s + r.beyondBound, 0),
          lagMs: summarize(of.flatMap((r) => r.lagsMs)),
          mutationMs: summarize(of.flatMap((r) => r.mutationMs)),
          ...(fault === 'forged-heartbeat' ? { heartbeatsForged: of.reduce((s, r) => s + r.forgedHeartbeats, 0) } : {}),
        },
      ];
    }),
  );
  const total = {
    seed,
    redis: redisMode,
    maxAgeSeconds,
    boundMs: rig.boundMs,
    sdkWrites: runs.reduce((s, r) => s + r.sdkWrites, 0),
    apiWrites: runs.reduce((s, r) => s + r.apiWrites, 0),
    reads: runs.reduce((s, r) => s + r.reads, 0),
    pastTheBound: runs.reduce((s, r) => s + r.beyondBound, 0),
    lagMs: summarize(runs.flatMap((r) => r.lagsMs)),
    seconds: Math.round((performance.now() - started) / 1000),
    byFault,
  };
  console.info(
    `response cache fault soak, 3 instances + consumer + Redis (${redisMode}) on DynamoDB Local:\n${JSON.stringify(total, null, 2)}`,
  );
  failed = total.pastTheBound > 0 || total.sdkWrites < writes;
  if (total.sdkWrites < writes)
    console.info(`stopped after ${maxMinutes} min (SOAK_MAX_MINUTES) with ${total.sdkWrites} of ${writes} writes`);
} catch (error) {
  console.error(error);
  failed = true;
} finally {
  await rig?.stop();
  await children.killAll();
  await redis.dispose();
  dynamo.client.destroy();
  await local.stop();
}
process.exit(failed ? 1 : 0);
