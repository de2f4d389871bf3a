/**
 * `npm run bench:timeline`: where the wall time of one request goes, on tablegraph and the raw
 * chain side by side. Each system runs bundled, as the benchmark runs it, with a probe
 * (timelineProbe.ts) on Node's HTTP diagnostics channels; the requests go one at a time over a
 * keep-alive connection, the systems taking turns in batches. Printed per system and operation,
 * medians in ms from the request's headers being parsed: the body read, each DynamoDB call issued
 * and answered (its body's end), the answer finished; and the gaps that are the system's own
 * (before the first call, between an answer and the next call, after the last answer).
 */
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signToken } from '../src/auth/tokens.js';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import { baselineNewTable } from '../src/migrations/runner.js';
import { benchBundle } from './bundle.js';
import { loadBenchConfig } from './config.js';
import { buildDataset, seedDataset } from './dataset.js';
import { operations } from './operations.js';
import type { Operation } from './operations.js';
import { setSystemsRuntime } from './procs.js';
import type { Child } from './procs.js';
import { median } from './rounds.js';
import { JWT_SECRET, startSystem, SYSTEMS } from './systems.js';
import type { SystemId } from './systems.js';

const COMMAND = {
  name: 'bench:timeline',
  run: 'npm run bench:timeline --',
  usage: `[--ops orderDetail] [--requests 400] [--rounds 3]

The timeline of a request, one at a time, on tablegraph and the raw chain taking turns: when each
DynamoDB call is issued and answered, and the gaps that are each system's own. Under two minutes;
needs Java (DynamoDB Local).

  --ops <a,b>       operations (bench/operations.ts ids; default orderDetail)
  --requests <n>    requests per system, operation and round, after a warm-up (default 400)
  --rounds <n>      rounds, the systems taking turns (default 3)`,
  options: {
    ops: { type: 'string', default: 'orderDetail' },
    requests: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '3' },
  },
} as const;

const { values } = parseCommandLine(COMMAND);
const requests = Number(values.requests);
const rounds = Number(values.rounds);
if (!(requests > 0) || !(rounds > 0)) exitWithUsageError(COMMAND, '--requests and --rounds must be positive');

interface Call {
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

async function batch(
  child: Child,
  headers: Record<string, string>,
  op: Operation,
  variables: () => unknown,
  n: number,
) {
  for (let i = 0; i < n; i += 1) {
    await send(
      child,
      headers,
      JSON.stringify({ operationName: op.operationName, query: op.query, variables: variables() }),
    );
  }
}

const fmt = (value: number) => value.toFixed(3).padStart(7);

/** The medians of a system's timelines of one operation, all calls of the same count. */
function summary(label: string, timelines: Timeline[]): string {
  const counts = new Map<number, number>();
  for (const t of timelines) counts.set(t.calls.length, (counts.get(t.calls.length) ?? 0) + 1);
  const calls = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
  const usable = timelines.filter((t) => t.calls.length === calls && t.calls.every((c) => c.answered !== undefined));
  const at = (pick: (t: Timeline) => number) => median(usable.map(pick));
  const lines = [`${label}: ${usable.length} requests of ${calls} DynamoDB calls (of ${timelines.length})`];
  lines.push(`  body read          ${fmt(at((t) => t.body ?? 0))}`);
  let own = at((t) => (t.calls[0]?.issued ?? t.finished) - (t.body ?? 0));
  lines.push(`  body -> call 1     ${fmt(own)}   (own)`);
  for (let k = 0; k < calls; k += 1) {
    const call = (t: Timeline) => t.calls[k] as Call;
    lines.push(`  call ${k + 1} issued      ${fmt(at((t) => call(t).issued))}`);
    lines.push(`  call ${k + 1} in flight   ${fmt(at((t) => (call(t).answered as number) - call(t).issued))}`);
    if (k + 1 < calls) {
      const gap = at((t) => (t.calls[k + 1] as Call).issued - (call(t).answered as number));
      own += gap;
      lines.push(`  answer ${k + 1} -> call ${k + 2} ${fmt(gap)}   (own)`);
    }
  }
  const tail = at((t) => t.finished - (t.calls.at(-1)?.answered ?? t.body ?? 0));
  own += tail;
  lines.push(`  last answer -> end ${fmt(tail)}   (own)`);
  lines.push(`  finished           ${fmt(at((t) => t.finished))}`);
  lines.push(`  own, summed        ${fmt(own)}`);
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
  const runId = `t${Date.now().toString(36)}`;
  const tableName = `Timeline-${runId}`;
  await ensureTable(admin.client, tableName, local.endpoint);
  await baselineNewTable(admin.doc, tableName);
  const data = buildDataset(config);
  await seedDataset(admin.doc, tableName, data, config, () => undefined);
  const wanted = values.ops.split(',').filter(Boolean);
  const ops = operations(data, runId).filter((op) => wanted.includes(op.id) && !op.mutation);
  if (ops.length === 0) exitWithUsageError(COMMAND, `no query among "${values.ops}" (bench/operations.ts)`);
  const token = await signToken(
    { userId: 'bench-admin', role: 'admin' },
    { secret: JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' },
  );
  const headers = { authorization: `Bearer ${token}` };
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
  const order: { system: SystemId; op: string; measured: boolean }[] = [];
  for (const op of ops) {
    const variables = op.variables(config.seed, 'timeline');
    for (let round = 0; round < rounds; round += 1) {
      const turn = round % 2 ? [...SYSTEM_IDS].reverse() : SYSTEM_IDS;
      for (const id of turn) {
        const child = systems.get(id) as Child;
        const warm = round === 0 ? requests : Math.ceil(requests / 10);
        await batch(child, headers, op, variables, warm);
        await batch(child, headers, op, variables, requests);
        for (let i = 0; i < warm; i += 1) order.push({ system: id, op: op.id, measured: false });
        for (let i = 0; i < requests; i += 1) order.push({ system: id, op: op.id, measured: true });
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
      const picked = all.filter((_t, i) => mine[i]?.op === op.id && mine[i]?.measured);
      process.stdout.write(`${summary(`${op.id} on ${SYSTEMS[id].label}`, picked)}\n`);
    }
  }
} finally {
  for (const child of children) await child.stop().catch(() => undefined);
  for (const out of outs.values()) rmSync(out, { force: true });
  admin.client.destroy();
  await local.stop();
}
