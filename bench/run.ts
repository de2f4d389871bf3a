/**
 * `npm run bench`: tablegraph against the limit (raw SDK chain) and a naive peer, in one run.
 *
 * 1. DynamoDB Local in memory, a fresh table, a seeded dataset (sizes: config.ts).
 * 2. Cost pass: each system behind the recording proxy, a few requests per operation, priced
 *    for Amazon DynamoDB from the items on the wire (cost.ts, costProxy.ts).
 * 3. Load: each operation x concurrency x system with autocannon over HTTP.
 * 4. Scale: a page deep in a big user partition against page 1 (scale.ts).
 * 5. Experiments behind the optimization notes (experiments.ts).
 * 6. bench/results/latest.md and latest.json; the markdown goes to stdout, progress to stderr.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signToken } from '../src/auth/tokens.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import type { LocalDynamo } from '../src/db/local.js';
import { loadBenchConfig, usage } from './config.js';
import { costOf } from './costPass.js';
import type { CostRow } from './costPass.js';
import { startCostProxy } from './costProxy.js';
import { buildDataset, seedDataset } from './dataset.js';
import { runExperiments } from './experiments.js';
import type { ExperimentResults } from './experiments.js';
import { runLoadWhenQuiet, warmUp } from './load.js';
import type { LoadResult } from './load.js';
import { operations } from './operations.js';
import type { Operation } from './operations.js';
import { backgroundMeter, cpuMs, PROJECT_ROOT, waitUntilIdle } from './procs.js';
import type { Child } from './procs.js';
import { renderMarkdown } from './report.js';
import { toJson } from './results.js';
import type { BenchResults, RunRow } from './results.js';
import { combineRounds } from './rounds.js';
import { evaluateTargets } from './targets.js';
import { runScale } from './scale.js';
import type { ScaleResult } from './scale.js';
import { isTablegraphVariant, JWT_SECRET, startSystem, SYSTEMS, VARIANTS } from './systems.js';
import type { SystemId, Variant } from './systems.js';
import { silenceSdkNodeVersionNotice } from '../src/runMain.js';

const progress = (message: string) => process.stderr.write(`${message}\n`);

const cleanups: (() => Promise<void>)[] = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    const step = cleanups.pop() as () => Promise<void>;
    await step().catch((error: unknown) => progress(`cleanup: ${String(error)}`));
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    progress(`\n${signal}: stopping`);
    void cleanUp().then(() => process.exit(130));
  });
}

/**
 * Waits until our processes are idle (a run must not inherit the backlog of the previous one:
 * a GraphQL server keeps resolving after autocannon hangs up) and, for up to `quietWaitSeconds`,
 * until the rest of the machine is quiet too (other processes below a quarter of a core).
 */
async function settle(pids: number[], quietWaitSeconds: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    const before = pids.map(cpuMs);
    const background = backgroundMeter(() => [...pids, process.pid]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const busy = pids.some((pid, i) => (cpuMs(pid) - (before[i] as number)) / 300 > 0.15);
    const quiet = background() < 0.25;
    const waited = Date.now() - started;
    if (!busy && (quiet || waited > quietWaitSeconds * 1000)) return;
    if (waited > Math.max(15_000, quietWaitSeconds * 1000)) return;
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(usage());
    return;
  }
  silenceSdkNodeVersionNotice();
  const config = loadBenchConfig();
  const started = performance.now();
  const runId = `b${Date.now().toString(36)}`;
  const tableName = `Bench-${runId}`;

  progress('starting DynamoDB Local (in memory)');
  const local: LocalDynamo = await startLocalDynamo();
  cleanups.push(() => local.stop());
  const admin = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
  cleanups.push(async () => admin.client.destroy());
  await ensureTable(admin.client, tableName, local.endpoint);

  const data = buildDataset(config);
  progress(`seeding ${tableName}`);
  const seeding = await seedDataset(admin.doc, tableName, data, config, progress);
  progress(
    `seeded ${seeding.items} items in ${seeding.seconds.toFixed(1)} s (${seeding.itemsPerSecond.toFixed(0)} items/s)`,
  );

  const token = await signToken(
    { userId: 'bench-admin', role: 'admin' },
    { secret: JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' },
  );
  const headers = { authorization: `Bearer ${token}` };

  const allOps = operations(data, runId);
  const unknownOp = config.ops.find((id) => !allOps.some((op) => op.id === id));
  if (unknownOp) throw new Error(`unknown operation ${unknownOp}: one of ${allOps.map((op) => op.id).join(', ')}`);
  const ops = config.scaleOnly ? [] : allOps.filter((op) => config.ops.length === 0 || config.ops.includes(op.id));
  const chosen = (id: SystemId) =>
    config.systems.includes(id) || (SYSTEMS[id].tablegraph === true && config.systems.includes('server'));
  const systemIds = (Object.keys(SYSTEMS) as SystemId[]).filter((id) =>
    config.scaleOnly ? id === 'server' : config.systems.length === 0 || chosen(id),
  );
  const variants = VARIANTS.filter((variant) => systemIds.includes(variant.system));
  const applies = (variant: Variant, op: Operation) => !variant.ops || variant.ops.includes(op.id);
  const opSeed = (op: Operation) => config.seed + 1000 * (ops.indexOf(op) + 1);

  // --- cost pass -------------------------------------------------------------------------------
  const phases: Record<string, number> = {};
  let phaseStarted = started;
  const endPhase = (name: string) => {
    const now = performance.now();
    phases[name] = (now - phaseStarted) / 1000;
    phaseStarted = now;
  };
  endPhase('database, seeding');
  progress('cost pass: systems behind the recording proxy');
  const proxy = await startCostProxy(local.endpoint);
  const probes = new Map<SystemId, Child>();
  const costs: CostRow[] = [];
  try {
    for (const id of systemIds) {
      probes.set(id, await startSystem(SYSTEMS[id], { endpoint: proxy.endpoint, tableName, headers }));
    }
    cleanups.push(async () => {
      for (const probe of probes.values()) await probe.stop();
    });
    const costVariants: Variant[] = [
      ...variants,
      ...(systemIds.includes('raw')
        ? [
            {
              key: 'raw-projected',
              label: 'raw chain, projected',
              system: 'raw' as const,
              query: '?plan=projected',
              ops: ['userOrders'],
            },
          ]
        : []),
    ];
    for (const op of ops) {
      for (const variant of costVariants.filter((v) => applies(v, op))) {
        const probe = probes.get(variant.system) as Child;
        const row = await costOf(
          proxy,
          probe.url + variant.query,
          headers,
          op,
          variant.key,
          config.costSamples,
          opSeed(op),
        );
        costs.push(row);
        progress(
          `  ${op.id.padEnd(13)} ${variant.key.padEnd(13)} ${row.amazon.requests.toFixed(1)} requests, ${row.amazon.readUnits.toFixed(1)} RCU, ${(row.amazon.writeUnits + row.amazon.indexWriteUnits).toFixed(1)} WCU (Amazon model)`,
        );
      }
    }
  } finally {
    for (const probe of probes.values()) await probe.stop();
    probes.clear();
    await proxy.close();
  }

  // --- load ------------------------------------------------------------------------------------
  endPhase('cost pass');
  progress('starting the systems under test');
  const children = new Map<SystemId, Child>();
  for (const id of systemIds) {
    const child = await startSystem(SYSTEMS[id], { endpoint: local.endpoint, tableName, headers });
    children.set(id, child);
    cleanups.push(() => child.stop());
  }
  for (const child of children.values()) await waitUntilIdle(child.pid);
  const targetOf = (variant: Variant) => {
    const child = children.get(variant.system) as Child;
    return { url: child.url + variant.query, pid: child.pid };
  };
  const allPids = () => [local.pid, ...[...children.values()].map((child) => child.pid)];
  /** Before a measured run: our processes idle, and the machine quiet if it becomes so soon. */
  const settleAll = () => settle(allPids(), config.quietWaitSeconds);
  /** After a run: only our processes idle (no backlog carried into the next run). */
  const settleIdle = () => settle(allPids(), 0);

  progress('warming up (JIT, connection pools)');
  for (const variant of variants) {
    for (const op of ops.filter((o) => applies(variant, o))) {
      await warmUp({
        target: targetOf(variant),
        dbPid: local.pid,
        operationName: op.operationName,
        query: op.query,
        variables: op.variables(opSeed(op) + 500, `warm-${variant.key}`),
        connections: 4,
        seconds: 1,
        headers,
      });
      await settleIdle();
    }
  }

  const runs: RunRow[] = [];
  for (const op of ops) {
    progress(`load: ${op.id} (${op.title})`);
    for (const connections of config.connections) {
      const cell = variants.filter((v) => applies(v, op));
      const spec = (variant: Variant) => ({
        target: targetOf(variant),
        dbPid: local.pid,
        operationName: op.operationName,
        query: op.query,
        connections,
        headers,
      });
      const measured = new Map<string, LoadResult[]>(cell.map((variant) => [variant.key, []]));
      // Round by round, the variants of the cell take turns: each round compares them under
      // the same conditions, and --rounds N gives every variant N turns.
      for (let round = 1; round <= config.rounds; round += 1) {
        for (const variant of cell) {
          if (round === 1) {
            await warmUp({
              ...spec(variant),
              variables: op.variables(opSeed(op) + 100 + connections, `w${connections}-${variant.key}`),
              seconds: config.warmupSeconds,
            });
          }
          await settleAll();
          const result = await runLoadWhenQuiet(
            {
              ...spec(variant),
              variables: op.variables(
                opSeed(op) + connections + 10_000 * (round - 1),
                `c${connections}-${variant.key}${round > 1 ? `-r${round}` : ''}`,
              ),
              seconds: config.durationSeconds,
            },
            settleAll,
          );
          await settleIdle();
          measured.get(variant.key)?.push(result);
          progress(
            `  c=${String(connections).padEnd(3)} ${variant.key.padEnd(11)}${config.rounds > 1 ? ` r${round}` : ''} ${result.requestsPerSecond.toFixed(0).padStart(5)} req/s  p50 ${result.latencyMs.p50.toFixed(1).padStart(7)} ms  p99 ${result.latencyMs.p99.toFixed(1).padStart(7)} ms  ${result.dynamodb.requests.toFixed(1)} DynamoDB req/op  CPU ${result.cpuMsPerRequest.toFixed(2)} ms/req${result.failures ? `  FAILURES ${result.failures}: ${result.failureSample}` : ''}`,
          );
        }
      }
      for (const variant of cell) {
        runs.push({ op: op.id, variant: variant.key, ...combineRounds(measured.get(variant.key) ?? []) });
      }
    }
  }

  endPhase('load');
  // --- scale -----------------------------------------------------------------------------------
  let scale: ScaleResult | undefined;
  const server = children.get('server');
  if (config.scaleOrders > 0 && server) {
    progress(`scale: a partition of ${config.scaleOrders} orders`);
    scale = await runScale({
      endpoint: local.endpoint,
      tableName,
      target: { url: server.url, pid: server.pid },
      dbPid: local.pid,
      headers,
      orders: config.scaleOrders,
      connections: [1, 4],
      seconds: config.durationSeconds,
      warmupSeconds: config.warmupSeconds,
      settle: settleAll,
      progress,
    });
  }

  endPhase('scale');
  // --- experiments -----------------------------------------------------------------------------
  let experiments: ExperimentResults = { roundTrips: [], rows: [], profile: undefined, micro: [] };
  if (config.experiments && !config.scaleOnly) {
    progress('experiments');
    await settleAll();
    experiments = await runExperiments({
      context: {
        dbPid: local.pid,
        headers,
        seconds: config.durationSeconds,
        warmupSeconds: config.warmupSeconds,
        seed: config.seed,
        settle: settleAll,
        progress,
      },
      endpoint: local.endpoint,
      tableName,
      data,
      ops,
      children,
      highConnections: Math.max(...config.connections),
      onStart: (stop) => cleanups.push(stop),
    });
  }

  endPhase('experiments');
  for (const child of children.values()) {
    const warnings = child.warnings();
    if (warnings.length > 0) progress(`${child.name} logged ${warnings.length} warning(s), e.g. ${warnings[0]}`);
  }
  await cleanUp();

  const results: BenchResults = {
    generatedAt: new Date().toISOString(),
    totalSeconds: (performance.now() - started) / 1000,
    phases,
    environment: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      database: 'DynamoDB Local (in memory), same machine',
    },
    config,
    dataset: {
      users: data.users.length,
      buyers: data.buyers.length,
      products: data.products.length,
      categories: data.categories.length,
      orders: data.orders.length,
      scaleOrders: config.scaleOrders,
      tableItems: seeding.items,
      seeding,
    },
    operations: ops.map((op) => ({ id: op.id, title: op.title, levels: op.levels })),
    variants: [
      ...VARIANTS.map((variant) => ({
        key: variant.key,
        label: variant.label,
        ...(isTablegraphVariant(variant) ? { tablegraph: true } : {}),
      })),
      { key: 'raw-projected', label: 'raw chain, projected' },
    ],
    costs,
    runs,
    scale,
    experiments,
    targets: [],
  };
  results.targets = evaluateTargets(results);
  const markdown = renderMarkdown(results);
  const dir = path.resolve(PROJECT_ROOT, config.resultsDir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${config.resultsName}.md`), markdown);
  writeFileSync(path.join(dir, `${config.resultsName}.json`), `${toJson(results)}\n`);
  process.stdout.write(markdown);
  progress(
    `\nwrote ${path.relative(process.cwd(), dir)}/${config.resultsName}.md and .json in ${results.totalSeconds.toFixed(0)} s`,
  );
}

main().catch(async (error: unknown) => {
  progress(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await cleanUp();
  process.exit(1);
});
