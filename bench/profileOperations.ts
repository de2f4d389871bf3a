/**
 * `npm run bench:profile`: where the CPU of chosen operations goes, by layer, on tablegraph and
 * the raw chain side by side, at the concurrencies asked for (the full benchmark profiles at
 * concurrency 1 only, among its experiments). It seeds the benchmark's data set in its own
 * DynamoDB Local, bundles the systems as the benchmark does, and runs each system once more
 * under V8's sampling profiler (profile.ts): frames are mapped to their sources through the
 * bundle's source map. On a machine shared with other work the samples count the time a process
 * spent descheduled too: read it on a quiet machine.
 */
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { createDynamo } from '../src/db/client.js';
import { startLocalDynamo } from '../src/db/local.js';
import { benchBundle } from './bundle.js';
import { loadBenchConfig } from './config.js';
import { settle } from './loadPhase.js';
import { setSystemsRuntime } from './procs.js';
import { mergeProfiles, profileSystem } from './profile.js';
import type { ServerProfile } from './profile.js';
import { seededTable } from './seededTable.js';
import { SYSTEMS } from './systems.js';
import type { SystemId } from './systems.js';

const COMMAND = {
  name: 'bench:profile',
  run: 'npm run bench:profile --',
  usage: `[--ops placeOrder] [--systems server,raw] [--connections 1,16] [--seconds 6]

CPU per request by layer (V8's sampling profiler) of each operation on each system, one column
per system, operation and concurrency. BENCH_PROFILE_FUNCTIONS=N also prints the N functions with
the most self time. A few minutes; needs Java (DynamoDB Local).

  --ops <a,b>           operations (bench/operations.ts ids; default placeOrder)
  --systems <a,b>       systems (default server,raw)
  --connections <a,b>   concurrencies (default 1,16)
  --seconds <n>         seconds of sampled load per operation (default 6)`,
  options: {
    ops: { type: 'string', default: 'placeOrder' },
    systems: { type: 'string', default: 'server,raw' },
    connections: { type: 'string', default: '1,16' },
    seconds: { type: 'string', default: '6' },
  },
} as const;

const { values } = parseCommandLine(COMMAND);
const list = (text: string) => text.split(',').filter((part) => part !== '');
const connections = list(values.connections).map(Number);
const seconds = Number(values.seconds);
const systems = list(values.systems);
if (!connections.every((n) => Number.isInteger(n) && n > 0) || !(seconds > 0)) {
  exitWithUsageError(COMMAND, '--connections and --seconds must be positive whole numbers');
}
const unknownSystem = systems.find((id) => !(id in SYSTEMS));
if (unknownSystem) exitWithUsageError(COMMAND, `no system "${unknownSystem}" (${Object.keys(SYSTEMS).join(', ')})`);

const config = { ...loadBenchConfig([]), scaleOrders: 0 };
setSystemsRuntime('bundle');
benchBundle();
const local = await startLocalDynamo();
const admin = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
const stops: (() => Promise<void>)[] = [];
try {
  const { tableName, ops: every, headers } = await seededTable(admin, local.endpoint, config, 'Profile', 'p');
  const ops = every.filter((op) => list(values.ops).includes(op.id));
  if (ops.length === 0) exitWithUsageError(COMMAND, `no operation among "${values.ops}" (bench/operations.ts)`);
  const profiles: ServerProfile[] = [];
  for (const level of connections) {
    for (const system of systems as SystemId[]) {
      process.stderr.write(`profiling ${SYSTEMS[system].label} at concurrency ${level}\n`);
      profiles.push(
        await profileSystem({
          system,
          label: `${SYSTEMS[system].label} c=${level}`,
          systemEnv: { endpoint: local.endpoint, tableName, headers },
          dbPid: local.pid,
          headers,
          ops,
          seconds,
          warmupSeconds: config.warmupSeconds,
          connections: level,
          seed: config.seed + level,
          settle: () => settle([local.pid], config.quietWaitSeconds),
          onStart: (stop) => stops.push(stop),
        }),
      );
    }
  }
  const merged = mergeProfiles(profiles);
  const columns = merged.operations;
  process.stdout.write(`| layer | ${columns.map((column) => column.id).join(' | ')} |\n`);
  process.stdout.write(`| --- | ${columns.map(() => '---:').join(' | ')} |\n`);
  process.stdout.write(
    `| **all (ms per request)** | ${columns.map((column) => column.msPerRequest.toFixed(3)).join(' | ')} |\n`,
  );
  for (const row of merged.layers) {
    const cells = columns.map((column) => (row.msPerRequest[column.id] ?? 0).toFixed(3));
    process.stdout.write(`| ${row.layer} | ${cells.join(' | ')} |\n`);
  }
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  admin.client.destroy();
  await local.stop();
}
