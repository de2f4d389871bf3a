/**
 * Where the server's CPU goes: the server runs once more under V8's sampling profiler
 * (`--cpu-prof`), takes a few load runs at concurrency 1, and the samples that fall inside each
 * run are summed by the code they were in (self time), per request. The profiler itself adds a
 * little; the split between layers is what matters. A bundled system's samples are attributed
 * through its source map (bundle.ts), so the layers are the same as under tsx.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { originalUrl } from './bundle.js';
import { runLoad, warmUp } from './load.js';
import type { LoadTarget } from './load.js';
import type { Operation } from './operations.js';
import { waitUntilIdle } from './procs.js';
import { startSystem, SYSTEMS } from './systems.js';
import type { SystemEnv, SystemId } from './systems.js';

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  layer: string;
  /** CPU ms per request, by column (`<system> <operation>`). */
  msPerRequest: Record<string, number>;
}

export interface ServerProfile {
  /** One column per profiled system and operation. */
  operations: { id: string; requests: number; msPerRequest: number }[];
  layers: ProfileRow[];
}

/** Joins the profiles of several systems into one table (a layer absent from one counts 0 there). */
export function mergeProfiles(profiles: ServerProfile[]): ServerProfile {
  const operations = profiles.flatMap((profile) => profile.operations);
  const layers = new Map<string, Record<string, number>>();
  for (const profile of profiles) {
    for (const row of profile.layers) layers.set(row.layer, { ...layers.get(row.layer), ...row.msPerRequest });
  }
  const total = (row: Record<string, number>) => Object.values(row).reduce((a, b) => a + b, 0);
  return {
    operations,
    layers: [...layers]
      .map(([layer, msPerRequest]) => ({ layer, msPerRequest }))
      .sort((a, b) => total(b.msPerRequest) - total(a.msPerRequest)),
  };
}

const PACKAGE_LAYERS: [RegExp, string][] = [
  [/^(@smithy|@aws-sdk|@aws-crypto)\//, 'AWS SDK (signing, HTTP, (un)marshalling)'],
  [/^graphql\//, 'graphql-js (parse, validate, execute)'],
  [/^@apollo\//, 'Apollo Server (request pipeline, plugins)'],
  [/^@as-integrations\/|^(express|router|body-parser|finalhandler|send|qs)\//, 'Express'],
  [
    /^(raw-body|on-finished|type-is|content-type|iconv-lite|depd|mime|negotiator|accepts)\//,
    'HTTP helpers (content negotiation, body types)',
  ],
  [/^@escape\.tech\//, 'graphql-armor'],
  [/^graphql-query-complexity\//, 'graphql-query-complexity'],
  [/^jose\//, 'jose (JWT verification)'],
  [/^prom-client\//, 'prom-client (metrics)'],
  [
    /^(pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|on-exit-leak-free|atomic-sleep|safe-stable-stringify)\//,
    'pino (logging)',
  ],
  [/^dataloader\//, 'DataLoader'],
  [/^@graphql-tools\//, 'graphql-tools'],
  [/^tsx\//, 'tsx (loader)'],
];

function layerOf(url: string, functionName: string): string | undefined {
  if (functionName === '(idle)') return undefined;
  if (functionName === '(garbage collector)') return 'garbage collection';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length);
    for (const [pattern, layer] of PACKAGE_LAYERS) if (pattern.test(rest)) return layer;
    return `other packages (${rest
      .split('/')
      .slice(0, rest.startsWith('@') ? 2 : 1)
      .join('/')})`;
  }
  if (url.startsWith('node:')) {
    if (/_http|net|stream|buffer|events|timers|async_hooks|task_queues/.test(url))
      return 'Node core (HTTP, streams, events)';
    if (/crypto/.test(url)) return 'Node core (crypto)';
    return 'Node core (other)';
  }
  if (url.includes('/src/'))
    return `tablegraph ${url
      .slice(url.indexOf('/src/') + 1)
      .split('/')
      .slice(0, 2)
      .join('/')}`;
  if (url.includes('/resolvers/')) return 'tablegraph resolvers/';
  if (!url)
    return functionName === 'writev' || functionName === 'writeUtf8String' || functionName === 'writeBuffer'
      ? 'socket writes (syscalls)'
      : 'native (microtasks, program)';
  return 'other';
}

function windowed(profile: CpuProfile, from: bigint, to: bigint): Map<string, number> {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, number>();
  // Sample timestamps are microseconds on the monotonic clock, like process.hrtime.bigint() / 1000.
  let time = profile.startTime;
  const start = Number(from / 1000n);
  const end = Number(to / 1000n);
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    time += delta;
    if (time < start || time > end) continue;
    const frame = byNode.get(profile.samples[i] as number);
    if (!frame) continue;
    const layer = layerOf(frame.url, frame.functionName);
    if (layer) totals.set(layer, (totals.get(layer) ?? 0) + delta / 1000);
  }
  return totals;
}

/** `BENCH_PROFILE_FUNCTIONS=N`: the N functions with the most self time per request, for finding levers. */
function printTopFunctions(
  profile: CpuProfile,
  window: { id: string; from: bigint; to: bigint; requests: number },
  n: number,
) {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, number>();
  let time = profile.startTime;
  const start = Number(window.from / 1000n);
  const end = Number(window.to / 1000n);
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    time += delta;
    if (time < start || time > end) continue;
    const frame = byNode.get(profile.samples[i] as number);
    if (!frame || frame.functionName === '(idle)') continue;
    const where = frame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|resolvers)\//, '$1/');
    const key = `${frame.functionName || '(anonymous)'} ${where}`;
    totals.set(key, (totals.get(key) ?? 0) + delta / 1000);
  }
  const rows = [...totals].sort((a, b) => b[1] - a[1]).slice(0, n);
  process.stderr.write(`top functions, ${window.id} (${window.requests} requests), self ms per request:\n`);
  for (const [key, ms] of rows) process.stderr.write(`  ${(ms / Math.max(window.requests, 1)).toFixed(3)}  ${key}\n`);
}

export async function profileSystem(options: {
  system: SystemId;
  /** Appended to the system's URL (the raw chain's `?plan=`). */
  query?: string;
  /** Names the system in the columns. */
  label?: string;
  systemEnv: SystemEnv;
  dbPid: number;
  headers: Record<string, string>;
  ops: Pick<Operation, 'id' | 'operationName' | 'query' | 'variables'>[];
  seconds: number;
  warmupSeconds: number;
  /** Concurrent connections of the sampled runs (1 unless told). */
  connections?: number;
  seed: number;
  settle: () => Promise<void>;
  onStart: (stop: () => Promise<void>) => void;
}): Promise<ServerProfile> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tablegraph-profile-'));
  try {
    const child = await startSystem(SYSTEMS[options.system], {
      ...options.systemEnv,
      // A sample every 250 µs (V8's default is 1 ms): enough samples per layer in a few seconds.
      nodeArgs: ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${dir}`],
    });
    options.onStart(() => child.stop());
    await waitUntilIdle(child.pid);
    const target: LoadTarget = { url: child.url + (options.query ?? ''), pid: child.pid };
    const label = options.label ?? SYSTEMS[options.system].label;
    const windows: { id: string; from: bigint; to: bigint; requests: number }[] = [];
    for (const op of options.ops) {
      const spec = {
        target,
        dbPid: options.dbPid,
        operationName: op.operationName,
        query: op.query,
        connections: options.connections ?? 1,
        headers: options.headers,
      };
      // A fresh process: warm it like the long-running ones before sampling.
      await warmUp({
        ...spec,
        connections: 4,
        variables: op.variables(options.seed + 3, `profile-warm-${options.system}`),
        // Past V8's tiering of the hot functions (a few hundred requests), which would otherwise
        // be counted as the first requests' cost.
        seconds: 6,
      });
      await options.settle();
      const from = process.hrtime.bigint();
      const result = await runLoad({
        ...spec,
        // Per system: a mutation's idempotency keys must not be replays of another system's.
        variables: op.variables(options.seed, `profile-${options.system}`),
        seconds: options.seconds,
      });
      windows.push({
        id: `${label} ${op.id}`,
        from,
        to: process.hrtime.bigint(),
        requests: result.requests,
      });
    }
    await child.stop();
    // The main thread's profile: the largest file (tsx's loader thread writes a smaller one).
    const files = readdirSync(dir)
      .filter((name) => name.endsWith('.cpuprofile'))
      .map((name) => path.join(dir, name))
      .sort((a, b) => statSync(b).size - statSync(a).size);
    if (!files[0]) throw new Error(`the profiled ${options.system} wrote no profile`);
    const profile = JSON.parse(readFileSync(files[0], 'utf8')) as CpuProfile;
    // A bundled system's frames all name its bundle: each is named by the source it came from.
    for (const { callFrame } of profile.nodes) {
      callFrame.url = originalUrl(callFrame.url, callFrame.lineNumber, callFrame.columnNumber);
    }
    const perOp = windows.map((window) => ({ window, totals: windowed(profile, window.from, window.to) }));
    if (process.env.BENCH_PROFILE_FUNCTIONS) {
      for (const window of windows) printTopFunctions(profile, window, Number(process.env.BENCH_PROFILE_FUNCTIONS));
    }
    const layers = new Set(perOp.flatMap(({ totals }) => [...totals.keys()]));
    const rows: ProfileRow[] = [...layers].map((layer) => ({
      layer,
      msPerRequest: Object.fromEntries(
        perOp.map(({ window, totals }) => [window.id, (totals.get(layer) ?? 0) / Math.max(window.requests, 1)]),
      ),
    }));
    const last = windows.at(-1)?.id ?? '';
    rows.sort((a, b) => (b.msPerRequest[last] ?? 0) - (a.msPerRequest[last] ?? 0));
    return {
      operations: perOp.map(({ window, totals }) => ({
        id: window.id,
        requests: window.requests,
        msPerRequest: [...totals.values()].reduce((a, b) => a + b, 0) / Math.max(window.requests, 1),
      })),
      layers: rows,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
