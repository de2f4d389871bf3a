/**
 * `npm run bench:timeline`: where the wall time of one request goes, on tablegraph and the raw
 * chain side by side. Each system runs bundled, as the benchmark runs it, with a probe
 * (timelineProbe.ts) on Node's HTTP diagnostics channels; the requests go one at a time over a
 * keep-alive connection, the systems taking turns request by request. Printed per system and operation,
 * medians in ms from the request's headers being parsed: the body read, each DynamoDB call issued
 * and answered (its body's end), the answer finished; and the gaps in which the system works
 * (before the first call, between an answer and the next call, after the last answer), which
 * include the SDK's building of each request and reading of each answer, the same code on both.
 */
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { createDynamo } from '../src/db/client.js';
import { startLocalDynamo } from '../src/db/local.js';
import { benchBundle } from './bundle.js';
import { loadBenchConfig } from './config.js';
import { setSystemsRuntime } from './procs.js';
import type { Child } from './procs.js';
import { median } from './rounds.js';
import { seededTable } from './seededTable.js';
import { startSystem, SYSTEMS } from './systems.js';
import type { SystemId } from './systems.js';

const COMMAND = {
  name: 'bench:timeline',
  run: 'npm run bench:timeline --',
  usage: `[--ops orderDetail] [--requests 1000] [--warmup 300]

The timeline of a request, one at a time, on tablegraph and the raw chain taking turns: when each
DynamoDB call is issued and answered, and the gaps in which each system works. A few minutes, most of
them seeding; needs Java (DynamoDB Local).

  --ops <a,b>       operations (bench/operations.ts ids; default orderDetail)
  --requests <n>    measured requests per system and operation (default 1000)
  --warmup <n>      requests per system and operation before those (default 300)`,
  options: {
    ops: { type: 'string', default: 'orderDetail' },
    requests: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '300' },
  },
} as const;

const { values } = parseCommandLine(COMMAND);
const requests = Number(values.requests);
const warmup = Number(values.warmup);
if (!(requests > 0) || !(warmup >= 0))
  exitWithUsageError(COMMAND, '--requests must be positive, --warmup not negative');

interface Call {
  command: string;
  issued: number;
  headers?: number;
  answered?: number;
}
interface Timeline {
  body?: number;
  calls: Call[];
  finished: number;
}

const PROBE = path.join(import.meta.dirname, 'timelineProbe.ts');
const SYSTEM_IDS: SystemId[] = ['server', 'raw'];

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request, answered 200 with no errors, or a thrown error. */
function send(child: Child, headers: Record<string, string>, body: string): Promise<void> {
  const { hostname, port, pathname } = new URL(child.url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: hostname,
        port,
        path: pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          response.statusCode === 200 && !text.includes('"errors"')
            ? resolve()
            : reject(new Error(`${child.name} answered ${response.statusCode}: ${text.slice(0, 300)}`)),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const fmt = (value: number) => value.toFixed(3).padStart(7);

/** The medians of a system's timelines of one operation, all calls of the same count. */
function summary(label: string, timelines: Timeline[], latencies: number[]): string {
  const counts = new Map<number, number>();
  for (const t of timelines) counts.set(t.calls.length, (counts.get(t.calls.length) ?? 0) + 1);
  const calls = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
  const usable = timelines.filter((t) => t.calls.length === calls && t.calls.every((c) => c.answered !== undefined));
  const at = (pick: (t: Timeline) => number) => median(usable.map(pick));
  const lines = [`${label}: ${usable.length} requests of ${calls} DynamoDB calls (of ${timelines.length})`];
  lines.push(`  body read          ${fmt(at((t) => t.body ?? 0))}`);
  let own = at((t) => (t.calls[0]?.issued ?? t.finished) - (t.body ?? 0));
  lines.push(`  body -> call 1     ${fmt(own)}   (the system, SDK included)`);
  for (let k = 0; k < calls; k += 1) {
    const call = (t: Timeline) => t.calls[k] as Call;
    lines.push(`  call ${k + 1} issued      ${fmt(at((t) => call(t).issued))}   ${usable[0]?.calls[k]?.command ?? ''}`);
    lines.push(`  call ${k + 1} in flight   ${fmt(at((t) => (call(t).answered as number) - call(t).issued))}`);
    if (k + 1 < calls) {
      const gap = at((t) => (t.calls[k + 1] as Call).issued - (call(t).answered as number));
      own += gap;
      lines.push(`  answer ${k + 1} -> call ${k + 2} ${fmt(gap)}   (the system, SDK included)`);
    }
  }
  const tail = at((t) => t.finished - (t.calls.at(-1)?.answered ?? t.body ?? 0));
  own += tail;
  lines.push(`  last answer -> end ${fmt(tail)}   (the system, SDK included)`);
  lines.push(`  finished           ${fmt(at((t) => t.finished))}`);
  lines.push(`  those, summed      ${fmt(own)}`);
  lines.push(`  at the client      ${fmt(median(latencies))}   (request written -> answer read)`);
  return lines.join('\n');
}

const config = { ...loadBenchConfig([]), scaleOrders: 0 };
setSystemsRuntime('bundle');
benchBundle();
const local = await startLocalDynamo();
const admin = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
const children: Child[] = [];
const outs = new Map<SystemId, string>();
try {
  const { runId, tableName, ops: every, headers } = await seededTable(admin, local.endpoint, config, 'Timeline', 't');
  const wanted = values.ops.split(',').filter(Boolean);
  const ops = every.filter((op) => wanted.includes(op.id) && !op.mutation);
  if (ops.length === 0) exitWithUsageError(COMMAND, `no query among "${values.ops}" (bench/operations.ts)`);
  const systems = new Map<SystemId, Child>();
  for (const id of SYSTEM_IDS) {
    const out = path.join(tmpdir(), `tablegraph-timeline-${runId}-${id}.jsonl`);
    outs.set(id, out);
    const child = await startSystem(SYSTEMS[id], {
      endpoint: local.endpoint,
      tableName,
      headers,
      extraEnv: { TIMELINE_OUT: out },
      nodeArgs: ['--import', PROBE],
    });
    children.push(child);
    systems.set(id, child);
  }
  // Which request of which system and operation each timeline line is: they come in the order sent.
  const order: { system: SystemId; op: string; latency?: number }[] = [];
  for (const op of ops) {
    const variables = op.variables(config.seed, 'timeline');
    const body = () => JSON.stringify({ operationName: op.operationName, query: op.query, variables: variables() });
    // One request to each system in turn, the first of each pair alternating, so that both see
    // the same machine from one moment to the next; the warm-up's requests are not measured.
    for (let i = 0; i < warmup + requests; i += 1) {
      for (const id of i % 2 ? [...SYSTEM_IDS].reverse() : SYSTEM_IDS) {
        const text = body();
        const started = performance.now();
        await send(systems.get(id) as Child, headers, text);
        const latency = performance.now() - started;
        order.push({ system: id, op: op.id, ...(i < warmup ? {} : { latency }) });
      }
    }
  }
  for (const child of children.splice(0)) await child.stop();
  const bySystem = new Map<SystemId, Timeline[]>();
  for (const id of SYSTEM_IDS) {
    const text = readFileSync(outs.get(id) as string, 'utf8');
    // The readiness probe's requests come first: keep the last ones, which are ours.
    const lines = text.split('\n').filter(Boolean);
    const ours = order.filter((entry) => entry.system === id).length;
    bySystem.set(
      id,
      lines.slice(lines.length - ours).map((line) => JSON.parse(line) as Timeline),
    );
  }
  for (const op of ops) {
    for (const id of SYSTEM_IDS) {
      const all = bySystem.get(id) as Timeline[];
      const mine = order.filter((entry) => entry.system === id);
      const measured = (i: number) => mine[i]?.op === op.id && mine[i].latency !== undefined;
      const picked = all.filter((_t, i) => measured(i));
      const latencies = mine.filter((_e, i) => measured(i)).map((entry) => entry.latency as number);
      process.stdout.write(`${summary(`${op.id} on ${SYSTEMS[id].label}`, picked, latencies)}\n`);
    }
  }
} finally {
  for (const child of children) await child.stop().catch(() => undefined);
  for (const out of outs.values()) rmSync(out, { force: true });
  admin.client.destroy();
  await local.stop();
}
