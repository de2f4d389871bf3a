/**
 * `npm run bench:memory`: does the server's memory follow what clients send, or stay bounded?
 * DynamoDB Local in memory with the quick bench's dataset, then, for each load of
 * memoryLoads.ts, a fresh server as `npm run bench` starts it (bundled, production mode, a
 * process of its own) with its inspector on, and autocannon sending that load for `--minutes`.
 * Every `--sample-seconds` the server's RSS is read from /proc, then its heap, external and
 * array buffers after a full GC (through the inspector); a heap snapshot is taken after the
 * first minute and at the end.
 *
 * Printed per load: the samples; the growth per 10,000 requests after the first minute (a
 * least-squares slope over the samples); the objects allocated between the two snapshots and
 * still alive, by constructor (what a leak is made of), and the shortest path from the GC roots
 * to a few of the largest group (what holds them).
 *
 *   npm run bench:memory                                   every load, 6 minutes each
 *   npm run bench:memory -- --loads=distinct --minutes=3 --results-dir=/tmp/memory   (keeps the snapshots)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { parseCommandLine } from '../src/cli.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { freePort, startLocalDynamo } from '../src/db/local.js';
import { baselineNewTable } from '../src/migrations/runner.js';
import { loadBenchConfig } from './config.js';
import { buildDataset, seedDataset } from './dataset.js';
import { connectInspector } from './heapInspector.js';
import type { HeapInspector, HeapSpaces, MemorySample } from './heapInspector.js';
import { largestGroups, readHeapSnapshot } from './heapSnapshot.js';
import type { HeapSnapshot } from './heapSnapshot.js';
import { buildLoad, LOAD_NAMES, LOAD_TITLES } from './memoryLoads.js';
import type { LoadName } from './memoryLoads.js';
import { memoryMb, PROJECT_ROOT } from './procs.js';
import { startSystem, SYSTEMS } from './systems.js';

const { values } = parseCommandLine({
  name: 'bench:memory',
  run: 'npm run bench:memory --',
  usage: `[--loads=<names>] [--minutes=<n>] [--connections=<n>] [--sample-seconds=<n>] [--results-dir=<dir>] [--no-snapshots]

Sends each load to a fresh server and samples its memory after a full GC; prints the growth per
10,000 requests and what the objects allocated after the first minute and still alive are.

  --loads            comma-separated, of ${LOAD_NAMES.join(', ')} (default: all)
  --minutes          minutes per load (default 6); the first is the warm-up the slope leaves out
  --connections      autocannon connections (default 8)
  --sample-seconds   seconds between samples (default 20)
  --results-dir      where to keep the two heap snapshots of each load (default: not kept)
  --no-snapshots     take none (a snapshot leaves the RSS higher: the allocator keeps what it used)`,
  options: {
    loads: { type: 'string', default: LOAD_NAMES.join(',') },
    minutes: { type: 'string', default: '6' },
    connections: { type: 'string', default: '8' },
    'sample-seconds': { type: 'string', default: '20' },
    'results-dir': { type: 'string', default: '' },
    'no-snapshots': { type: 'boolean', default: false },
  },
});

const loads = values.loads.split(',').filter(Boolean) as LoadName[];
const unknown = loads.find((name) => !LOAD_NAMES.includes(name));
if (unknown) throw new Error(`unknown load ${unknown}: one of ${LOAD_NAMES.join(', ')}`);
const seconds = Math.round(Number(values.minutes) * 60);
const sampleMs = Number(values['sample-seconds']) * 1000;
const resultsDir = values['results-dir'] ? path.resolve(PROJECT_ROOT, values['results-dir']) : undefined;
const progress = (message: string) => process.stderr.write(`${message}\n`);
const mb = (bytes: number) => bytes / 2 ** 20;
const SNAPSHOT_MAX_HEAP = 300 * 2 ** 20;

/** The heap after the first minute and at the end. */
type Snapshots = Partial<Record<'1min' | 'end', HeapSnapshot>>;

interface Sample {
  seconds: number;
  requests: number;
  rssMb: number;
  /** The heap's spaces when the RSS was read, before the GC. */
  spaces: HeapSpaces;
  after: MemorySample;
}

/** Least-squares slope of `y` over `x`. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

const config = loadBenchConfig(['--quick'], {});
const runId = `m${Date.now().toString(36)}`;
const tableName = `Memory-${runId}`;
progress('starting DynamoDB Local (in memory)');
const local = await startLocalDynamo();
const admin = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
await ensureTable(admin.client, tableName, local.endpoint);
await baselineNewTable(admin.doc, tableName);
const data = buildDataset(config);
await seedDataset(admin.doc, tableName, data, config, progress);

async function measure(name: LoadName): Promise<void> {
  const load = await buildLoad(name, data, runId);
  const inspectPort = await freePort();
  const server = await startSystem(SYSTEMS.server, {
    endpoint: local.endpoint,
    tableName,
    headers: {},
    nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`],
  });
  const inspector: HeapInspector = await connectInspector(inspectPort);
  const samples: Sample[] = [];
  const statuses = new Map<number, number>();
  let requests = 0;
  const snapshots: Snapshots = {};
  try {
    const started = performance.now();
    const sample = async () => {
      const elapsed = (performance.now() - started) / 1000;
      const rssMb = memoryMb(server.pid).rss;
      const at = requests;
      const spaces = await inspector.heapSpaces();
      samples.push({ seconds: elapsed, requests: at, rssMb, spaces, after: await inspector.memoryAfterGc() });
    };
    const snapshot = async (label: keyof Snapshots) => {
      // A snapshot's text must fit in one string here: past this heap, the growth says enough.
      if (values['no-snapshots']) return;
      const heapUsed = samples.at(-1)?.after.heapUsed ?? 0;
      if (heapUsed > SNAPSHOT_MAX_HEAP) {
        progress(`${name}: no ${label} snapshot, the heap holds ${mb(heapUsed).toFixed(0)} MB`);
        return;
      }
      const text = await inspector.snapshot();
      if (resultsDir) {
        mkdirSync(resultsDir, { recursive: true });
        writeFileSync(path.join(resultsDir, `${name}-${label}.heapsnapshot`), text);
      }
      snapshots[label] = readHeapSnapshot(text);
    };
    await sample();
    let i = 0;
    const instance = autocannon({
      url: server.url,
      connections: Number(values.connections),
      duration: seconds,
      timeout: 30,
      requests: [
        {
          method: 'POST',
          setupRequest: (request) => {
            const next = load(i++);
            return { ...request, headers: next.headers, body: next.body };
          },
        },
      ],
    });
    instance.on('response', (_client: unknown, status: number) => {
      requests += 1;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    });
    // One sampler at a time: a snapshot takes seconds, the next sample waits for it.
    let busy: Promise<void> = Promise.resolve();
    let snapshotTaken = false;
    const timer = setInterval(() => {
      busy = busy.then(async () => {
        await sample();
        if (!snapshotTaken && (performance.now() - started) / 1000 >= 60) {
          snapshotTaken = true;
          await snapshot('1min');
        }
      });
    }, sampleMs);
    await instance;
    clearInterval(timer);
    await busy;
    await sample();
    await snapshot('end');
  } finally {
    inspector.close();
    await server.stop();
  }
  report(name, samples, statuses, snapshots);
}

function report(name: LoadName, samples: Sample[], statuses: Map<number, number>, snapshots: Snapshots): void {
  const lines: string[] = [`\n## ${name}: ${LOAD_TITLES[name]}`, ''];
  lines.push(`statuses: ${[...statuses].map(([status, n]) => `${status} x ${n}`).join(', ')}`, '');
  lines.push(
    '| s | requests | RSS MB | V8 spaces MB | of which young MB | V8 malloc MB | after GC: RSS MB | heap used MB | heap total MB | external MB | array buffers MB |',
  );
  lines.push('| --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |');
  for (const s of samples) {
    lines.push(
      `| ${s.seconds.toFixed(0)} | ${s.requests} | ${s.rssMb.toFixed(1)} | ${mb(s.spaces.physical).toFixed(1)} | ${mb(s.spaces.newSpace).toFixed(1)} | ${mb(s.spaces.malloced).toFixed(1)} | ${mb(s.after.rss).toFixed(1)} | ${mb(s.after.heapUsed).toFixed(2)} | ${mb(s.after.heapTotal).toFixed(1)} | ${mb(s.after.external).toFixed(2)} | ${mb(s.after.arrayBuffers).toFixed(2)} |`,
    );
  }
  const settled = samples.filter((s) => s.seconds >= 60);
  const per10k = (value: (s: Sample) => number) =>
    (slope(settled.map((s): [number, number] => [s.requests, value(s)])) * 10_000).toFixed(2);
  lines.push(
    '',
    `growth per 10,000 requests after the first minute (${settled.length} samples): heap used ${per10k((s) => mb(s.after.heapUsed))} MB, external ${per10k((s) => mb(s.after.external))} MB, RSS ${per10k((s) => s.rssMb)} MB`,
  );
  const { '1min': first, end: last } = snapshots;
  if (first && last) {
    lines.push(
      '',
      `snapshots: ${first.nodes} objects, ${mb(first.bytes).toFixed(1)} MB after the first minute; ${last.nodes} objects, ${mb(last.bytes).toFixed(1)} MB at the end`,
      '',
      'allocated after the first snapshot and alive at the end, by constructor:',
      '',
      '| group | objects | KB |',
      '| --- | --: | --: |',
    );
    const newer = largestGroups(last.newerThan(first.maxId), 15);
    for (const [group, { count, bytes }] of newer)
      lines.push(`| ${group.replace(/\|/g, '\\|')} | ${count} | ${(bytes / 1024).toFixed(1)} |`);
    const top = newer[0];
    if (top) {
      lines.push('', `what holds the newest of "${top[0]}":`);
      for (const line of last.pathTo(top[0], first.maxId, 3)) lines.push(`- ${line}`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

try {
  process.stdout.write(
    `# server memory under load\n\n${seconds} s per load, ${values.connections} connections, node ${process.version}\n`,
  );
  for (const name of loads) {
    progress(`load ${name}: ${seconds} s`);
    await measure(name);
  }
} finally {
  admin.client.destroy();
  await local.stop();
}
