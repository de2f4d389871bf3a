/**
 * `npm run bench:budgets`: what an answer bomb costs the server, and what other clients wait
 * meanwhile. Starts DynamoDB Local (in memory) with the demo data and a server whose document
 * limits are out of the way (aliases, cost), so only the operation meter stands between each
 * bomb (a fragment of `__typename` aliases spread on nested pages of orders) and its answer.
 * For each bomb: the server's own duration of the request (its "graphql request" log line), the
 * process's memory growth while it runs, and the slowest answer of a probe (one product read
 * every 20 ms) while two such bombs run at once, back to back.
 *
 *   npm run bench:budgets                 the meter at its defaults
 *   npm run bench:budgets -- --defaults   every limit at its default (the alias limit answers first)
 *   npm run bench:budgets -- --unmetered  budgets out of the way too (what the server did before)
 *   npm run bench:budgets -- --ws         the bombs over a WebSocket (graphql-ws), the probe over HTTP
 */
import WebSocket from 'ws';
import { signToken } from '../src/auth/tokens.js';
import { parseCommandLine } from '../src/cli.js';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { BENCH_AUTH, startBenchServer, startBenchTable } from './benchServer.js';

const { values } = parseCommandLine({
  name: 'bench:budgets',
  run: 'npm run bench:budgets --',
  usage: `[--defaults | --unmetered] [--ws] [--rounds 6] [--only <bomb>]

What an answer bomb costs the server, and what other clients wait meanwhile, on its own DynamoDB
Local and server (the operation meter at its defaults unless told otherwise).

  --defaults     every limit at its default (the alias limit answers first)
  --unmetered    the budgets out of the way too (what the server did before them)
  --ws           the bombs over a WebSocket (graphql-ws), the probe over HTTP
  --rounds <n>   rounds per bomb (default 6)
  --only <text>  only the bombs whose name contains this text`,
  options: {
    unmetered: { type: 'boolean', default: false },
    defaults: { type: 'boolean', default: false },
    ws: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '6' },
    only: { type: 'string' },
  },
});
const rounds = Number(values.rounds);

/** `count` aliases of `__typename` in a fragment on Order, spread on `levels` nested pages of alice's orders. */
function typenameBomb(count: number, levels: number, first: number): string {
  const fragment = `fragment F on Order { ${Array.from({ length: count }, (_, i) => `a${i}: __typename`).join(' ')} }`;
  let nodes = '...F';
  for (let level = 1; level < levels; level += 1)
    nodes = `...F user { orders(first: ${first}) { nodes { ${nodes} } } }`;
  return `{ user(userId: "alice") { orders(first: ${first}) { nodes { ${nodes} } } } } ${fragment}`;
}

const BOMBS: [name: string, query: string][] = [
  ['600 aliases x 3 levels of 30', typenameBomb(600, 3, 30)],
  ['100 aliases x 3 levels of 30', typenameBomb(100, 3, 30)],
  ['600 aliases x 2 levels of 30', typenameBomb(600, 2, 30)],
  ['60 aliases x 3 levels of 10', typenameBomb(60, 3, 10)],
];
const PROBE = '{ product(productId: "tent-2p") { name } }';
const UNLIMITED = 1e15;

const table = await startBenchTable('BenchBudgets');
await putItems(table.dynamo.doc, table.tableName, demoItems());

// The server's own account of each request: its "graphql request" log lines, by request id.
const durations: number[] = [];
const app = await startBenchServer(table, {
  level: 'info',
  onLog: (entry) => {
    if (entry.msg === 'graphql request' && entry.operationName === null && typeof entry.durationMs === 'number')
      durations.push(entry.durationMs);
  },
  limits: {
    ...DEFAULT_LIMITS,
    ...(values.defaults
      ? {}
      : {
          maxAliases: 100_000,
          maxCost: UNLIMITED,
          maxSelectionSetFields: UNLIMITED,
          maxRepeatedFieldPairs: UNLIMITED,
          maxSelections: UNLIMITED,
        }),
    ...(values.unmetered
      ? {
          maxResultEntries: UNLIMITED,
          maxResultBytes: UNLIMITED,
          maxOperationRequests: UNLIMITED,
          maxOperationReadUnits: UNLIMITED,
        }
      : {}),
  },
});
const token = await signToken({ userId: 'alice', role: 'customer' }, BENCH_AUTH);

/** One operation over a fresh graphql-ws socket: its first result or error. */
async function sendOverWebSocket(query: string): Promise<{ ms: number; code: unknown }> {
  const started = performance.now();
  const socket = new WebSocket(app.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const answer = new Promise<unknown>((resolve) => {
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { type: string; payload?: unknown };
      if (message.type === 'connection_ack') {
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
      } else if (message.type === 'next' || message.type === 'error') {
        const payload = message.payload as { errors?: { extensions?: { code?: unknown } }[] } | unknown[];
        const errors = Array.isArray(payload) ? (payload as { extensions?: { code?: unknown } }[]) : payload.errors;
        resolve(errors?.[0]?.extensions?.code ?? 'ok');
      }
    });
  });
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
  const code = await answer;
  socket.close();
  return { ms: performance.now() - started, code };
}

async function send(query: string, overWebSocket = false): Promise<{ ms: number; code: unknown }> {
  if (overWebSocket) return sendOverWebSocket(query);
  const started = performance.now();
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as { errors?: { extensions?: { code?: unknown } }[] };
  return { ms: performance.now() - started, code: body.errors?.[0]?.extensions?.code ?? 'ok' };
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
await send(PROBE); // warm the connection and the loaders' code
console.log(
  `${values.defaults ? 'every limit at its default' : 'document limits lifted'}, ${values.unmetered ? 'unmetered' : 'metered'}, bombs over ${values.ws ? 'WebSocket' : 'HTTP'}; node ${process.version}`,
);
console.log('| bomb | answer | server ms (median, max) | RSS growth MB (max) | probe max ms under 2 bombs |');
console.log('| --- | --- | --- | --- | --- |');
for (const [name, query] of BOMBS) {
  if (values.only && !name.includes(values.only)) continue;
  durations.length = 0;
  await send(query, values.ws); // warm-up: parse, validate and execute once
  durations.length = 0;
  const growth: number[] = [];
  let code: unknown;
  for (let round = 0; round < rounds; round++) {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    code = (await send(query, values.ws)).code;
    clearInterval(sampler);
    growth.push(Math.max(peak, process.memoryUsage().rss) - before);
  }
  const sorted = [...durations].sort((a, b) => a - b);
  // Two bombs at once, back to back, while a probe asks every 20 ms.
  let running = true;
  const bombs = Promise.all(
    [0, 1].map(async () => {
      for (let round = 0; round < rounds; round++) await send(query, values.ws);
    }),
  ).finally(() => (running = false));
  let probeMax = 0;
  while (running) {
    probeMax = Math.max(probeMax, (await send(PROBE)).ms);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await bombs;
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  console.log(
    `| ${name} | ${String(code)} | ${median.toFixed(1)}, ${(sorted.at(-1) ?? NaN).toFixed(1)} | ${mb(Math.max(...growth))} | ${probeMax.toFixed(1)} |`,
  );
}
await app.stop();
await table.stop();
