/**
 * `npm run bench`: tablegraph against the limit (raw SDK chain) and a naive peer, in one run.
 *
 * 1. DynamoDB Local in memory, a fresh table, a seeded dataset (sizes: config.ts).
 * 2. Cost pass (costPhase.ts): each system behind the recording proxy, a few requests per
 *    operation, priced for Amazon DynamoDB from the items on the wire (cost.ts, costProxy.ts).
 * 3. Load (loadPhase.ts): each operation x concurrency x system with autocannon over HTTP, the
 *    systems taking turns round by round.
 * 4. Scale: a page deep in a big user partition against page 1 (scale.ts).
 * 5. Experiments behind the optimization notes (experiments.ts).
 * 6. bench/results/latest.md and latest.json; the markdown goes to stdout, progress to stderr.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signToken } from '../src/auth/tokens.js';
import { exitWithUsageError, UsageError, usageText } from '../src/cli.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import type { LocalDynamo } from '../src/db/local.js';
import { baselineNewTable } from '../src/migrations/runner.js';
import { loadBenchConfig, usage } from './config.js';
import { RAW_PROJECTED, runCostPhase } from './costPhase.js';
import { buildDataset, seedDataset } from './dataset.js';
import { runExperiments } from './experiments.js';
import type { ExperimentResults } from './experiments.js';
import { runLoadPhase } from './loadPhase.js';
import { benchBundle } from './bundle.js';
import { PROJECT_ROOT, setSystemsRuntime } from './procs.js';
import { renderMarkdown } from './report.js';
import { toJson } from './results.js';
import type { BenchResults } from './results.js';
import { planRun } from './runPlan.js';
import { runScale } from './scale.js';
import type { ScaleResult } from './scale.js';
import { isTablegraphVariant, JWT_SECRET, VARIANTS } from './systems.js';
import { evaluateTargets } from './targets.js';

const progress = (message: string) => process.stderr.write(`${message}\n`);

const COMMAND = { name: 'bench', run: 'npm run bench --', usage: usage() };

const cleanups: (() => Promise<void>)[] = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    const step = cleanups.pop() as () => Promise<void>;
    await step().catch((error: unknown) => {
      if (!stopping) progress(`cleanup: ${String(error)}`);
    });
  }
}

/**
 * Ctrl-C (or SIGTERM): one line, then everything this run started is stopped. Whatever the run
 * was awaiting may fail meanwhile (its processes got the signal too): that is not reported.
 */
let stopping: NodeJS.Signals | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = signal;
    progress(`\nbench: stopped by ${signal}; stopping what it started`);
    void cleanUp().then(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  if (process.argv.slice(2).some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(usageText(COMMAND));
    return;
  }
  const config = loadBenchConfig();
  const started = performance.now();
  const phases: Record<string, number> = {};
  let phaseStarted = started;
  const endPhase = (name: string) => {
    const now = performance.now();
    phases[name] = (now - phaseStarted) / 1000;
    phaseStarted = now;
  };
  // A process started while a signal is being handled is stopped at once, not left behind.
  const onStart = (stop: () => Promise<void>) => (stopping ? void stop() : void cleanups.push(stop));
  const runId = `b${Date.now().toString(36)}`;
  const tableName = `Bench-${runId}`;

  // --- the systems, bundled as deployed ----------------------------------------------------------
  setSystemsRuntime(config.tsx ? 'tsx' : 'bundle');
  if (config.tsx) progress('the systems run under tsx (--tsx), not as deployed');
  else {
    progress('bundling the systems with esbuild, as the image and the Lambda are');
    progress(`bundled into ${benchBundle().dir} in ${((performance.now() - phaseStarted) / 1000).toFixed(1)} s`);
  }
  endPhase('bundling');

  // --- database, seeding -----------------------------------------------------------------------
  progress('starting DynamoDB Local (in memory)');
  const local: LocalDynamo = await startLocalDynamo();
  onStart(() => local.stop());
  const admin = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
  cleanups.push(async () => admin.client.destroy());
  await ensureTable(admin.client, tableName, local.endpoint);
  // Seeded in the current format, as `npm start` seeds a table it creates: without the
  // baseline, the first server would scan the whole data set for migrations before serving.
  await baselineNewTable(admin.doc, tableName);
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
  const plan = planRun(config, data, runId);
  endPhase('database, seeding');

  // --- cost pass -------------------------------------------------------------------------------
  progress('cost pass: systems behind the recording proxy');
  const costs = await runCostPhase({
    plan,
    dynamoEndpoint: local.endpoint,
    tableName,
    headers,
    samples: config.costSamples,
    progress,
    onStart,
  });
  endPhase('cost pass');

  // --- load ------------------------------------------------------------------------------------
  const { runs, children, settleAll } = await runLoadPhase({
    plan,
    dynamo: { endpoint: local.endpoint, pid: local.pid },
    tableName,
    headers,
    connections: config.connections,
    rounds: config.rounds,
    prewarm: config.prewarm,
    warmupSeconds: config.warmupSeconds,
    durationSeconds: config.durationSeconds,
    quietWaitSeconds: config.quietWaitSeconds,
    progress,
    onStart,
  });
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
      ops: plan.ops,
      children,
      highConnections: Math.max(...config.connections),
      onStart,
    });
  }
  endPhase('experiments');
  for (const child of children.values()) {
    const warnings = child.warnings();
    if (warnings.length > 0) progress(`${child.name} logged ${warnings.length} warning(s), e.g. ${warnings[0]}`);
  }
  await cleanUp();

  // --- results ---------------------------------------------------------------------------------
  const results: BenchResults = {
    generatedAt: new Date().toISOString(),
    totalSeconds: (performance.now() - started) / 1000,
    phases,
    environment: environment(),
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
    operations: plan.ops.map((op) => ({ id: op.id, title: op.title, levels: op.levels })),
    variants: [
      ...VARIANTS.map((variant) => ({
        key: variant.key,
        label: variant.label,
        ...(isTablegraphVariant(variant) ? { tablegraph: true } : {}),
      })),
      { key: RAW_PROJECTED.key, label: RAW_PROJECTED.label },
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

const environment = (): BenchResults['environment'] => ({
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  memoryGb: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
  database: 'DynamoDB Local (in memory), same machine',
});

main().catch(async (error: unknown) => {
  if (stopping) return;
  await cleanUp();
  if (error instanceof UsageError) exitWithUsageError(COMMAND, error.message);
  progress(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
