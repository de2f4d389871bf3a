/**
 * `npm run bench:bombs`: what an anonymous validation bomb costs, over every transport, and what
 * another client waits meanwhile. The bomb is a 7.3 kB document under the token limit, `viewer {
 * userId }` 490 times, whose validation alone (graphql-js comparing every pair of fields that share
 * a response key) took hundreds of milliseconds; the selection pre-check refuses it before
 * validation (src/pipeline/admission/selectionShape.ts).
 *
 * Starts DynamoDB Local (in memory) with the demo data, a server at the default limits, and the
 * Lambda handler on the same table, all in this process. For each transport (HTTP, WebSocket, SSE,
 * Lambda):
 *
 * - one bomb at a time: the client's time to the refusal, for a new bomb each time (a comment
 *   makes each text new, so nothing is remembered) and for the same bomb again (answered from
 *   the memory of refusals);
 * - eight bombs at once: the time until the last of the eight is answered, new bombs each round,
 *   rounds back to back for two seconds at least;
 * - a probe, `{ __typename }` over HTTP on a new connection every 10 ms (for the Lambda, an
 *   invocation of the same handler), while rounds of eight run back to back: its slowest answers.
 *
 *   npm run bench:bombs                    the pre-check at its defaults
 *   npm run bench:bombs -- --unbounded     the pre-check out of the way (what the server did before)
 *   npm run bench:bombs -- --rounds 20     more rounds (default 10)
 */
import { parseCommandLine } from '../src/cli.js';
import type { Context } from 'aws-lambda';
import WebSocket from 'ws';
import { DEFAULT_LIMITS, loadGraphQLLambdaConfig } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { createDynamo } from '../src/db/client.js';
import { createGraphQLHandler } from '../src/lambda/graphql.js';
import { demoItems } from '../src/seed/seed.js';
import { apiGatewayEvent } from '../test/support/apiGatewayEvents.js';
import { BENCH_AUTH, startBenchServer, startBenchTable } from './benchServer.js';
import { probeOnNewConnection } from './probe.js';

const { values } = parseCommandLine({
  name: 'bench:bombs',
  run: 'npm run bench:bombs --',
  usage: `[--rounds <n>] [--unbounded]

An anonymous validation bomb over HTTP, WebSocket, SSE and the Lambda: one new bomb, the same
again, eight at once, and a concurrent { __typename } probe; prints the times per transport.

  --rounds <n>   rounds per transport (default 10)
  --unbounded    the server without the selection pre-check, for comparison`,
  options: {
    unbounded: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '10' },
  },
});
const rounds = Number(values.rounds);
const UNBOUNDED = 1e9;
const limits = {
  ...DEFAULT_LIMITS,
  ...(values.unbounded
    ? { maxSelectionSetFields: UNBOUNDED, maxRepeatedFieldPairs: UNBOUNDED, maxSelections: UNBOUNDED }
    : {}),
};

let serial = 0;
/** A bomb no server has seen: the comment changes its text, and so its hash. */
const newBomb = () => `{ ${'viewer { userId } '.repeat(490)}} # ${(serial += 1)}`;
const SAME_BOMB = `{ ${'viewer { userId } '.repeat(490)}}`;

const table = await startBenchTable('BenchValidationBombs');
await putItems(table.dynamo.doc, table.tableName, demoItems());
const app = await startBenchServer(table, { level: 'silent', limits });
const lambda = createGraphQLHandler(
  {
    ...loadGraphQLLambdaConfig({ NODE_ENV: 'test', DYNAMODB_ENDPOINT: table.endpoint, TABLE_NAME: table.tableName }),
    logLevel: 'silent',
    cursorSecret: 'bench-cursor-secret',
    auth: BENCH_AUTH,
    limits,
  },
  // A client of its own, as a function has.
  { dynamo: createDynamo({ endpoint: table.endpoint, region: 'us-east-1' }) },
);

type Send = (query: string) => Promise<string>;
const codeOf = (body: { errors?: { extensions?: { code?: string } }[] }): string =>
  body.errors?.[0]?.extensions?.code ?? 'ok';

const overHttp: Send = async (query) => {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return codeOf((await response.json()) as never);
};

const overSse: Send = async (query) => {
  const response = await fetch(`${app.url}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query }),
  });
  return codeOf((await response.json()) as never);
};

const overLambda: Send = async (query) => {
  const result = await lambda(apiGatewayEvent(JSON.stringify({ query }), {}, `bench-${(serial += 1)}`), {} as Context);
  return codeOf(JSON.parse(result.body ?? '{}') as never);
};

/** One anonymous graphql-ws socket, acknowledged; each bomb is one `subscribe` on it. */
async function openSocket(): Promise<Send> {
  const socket = new WebSocket(app.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const waiting = new Map<string, (code: string) => void>();
  let acked: () => void = () => undefined;
  const ack = new Promise<void>((resolve) => (acked = resolve));
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as { type: string; id?: string; payload?: unknown };
    if (message.type === 'connection_ack') return acked();
    const resolve = waiting.get(message.id ?? '');
    if (!resolve || (message.type !== 'next' && message.type !== 'error')) return;
    waiting.delete(message.id ?? '');
    const payload = message.payload as { errors?: unknown[] } | unknown[];
    resolve(codeOf({ errors: (Array.isArray(payload) ? payload : payload.errors) as never }));
  });
  socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  await ack;
  let id = 0;
  return (query) =>
    new Promise((resolve) => {
      const key = String((id += 1));
      waiting.set(key, resolve);
      socket.send(JSON.stringify({ id: key, type: 'subscribe', payload: { query } }));
    });
}

/** `{ __typename }` over a new TCP connection, as another client's first request: its ms. */
const probe = () => probeOnNewConnection({ url: app.url, query: '{ __typename }' });

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (value: number) => value.toFixed(1);

async function timed(send: Send, query: string): Promise<{ ms: number; code: string }> {
  const started = performance.now();
  const code = await send(query);
  return { ms: performance.now() - started, code };
}

async function measure(name: string, send: Send, probeOnce: () => Promise<number> = probe) {
  await send(newBomb()); // warm-up
  const fresh: number[] = [];
  const same: number[] = [];
  let code = '';
  for (let round = 0; round < rounds; round++) {
    const answer = await timed(send, newBomb());
    fresh.push(answer.ms);
    code = answer.code;
    same.push((await timed(send, SAME_BOMB)).ms);
  }
  // Rounds of eight new bombs at once, back to back, while the probe runs (two seconds at least).
  const eight: number[] = [];
  let running = true;
  const until = performance.now() + 2000;
  const bombs = (async () => {
    for (let round = 0; round < rounds || performance.now() < until; round++) {
      const started = performance.now();
      await Promise.all(Array.from({ length: 8 }, () => send(newBomb())));
      eight.push(performance.now() - started);
      // The next eight arrive as new requests do, after what is waiting on the event loop.
      await new Promise((resolve) => setImmediate(resolve));
    }
  })().finally(() => (running = false));
  const probes: number[] = [];
  while (running) {
    probes.push(await probeOnce());
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await bombs;
  for (const list of [fresh, same, eight, probes]) list.sort((a, b) => a - b);
  console.log(
    `| ${name} | ${code} | ${ms(percentile(fresh, 50))}, ${ms(fresh.at(-1) ?? NaN)} | ${ms(percentile(same, 50))} | ${ms(percentile(eight, 50))}, ${ms(eight.at(-1) ?? NaN)} | ${ms(percentile(probes, 50))}, ${ms(percentile(probes, 99))}, ${ms(probes.at(-1) ?? NaN)} (${probes.length}) |`,
  );
}

await probe(); // warm the route
console.log(
  `${values.unbounded ? 'selection pre-check out of the way' : 'selection pre-check at its defaults'}; ${rounds} rounds; node ${process.version}; one process (server, Lambda handler and clients)`,
);
console.log(
  '| transport | answer | one new bomb ms (median, max) | the same bomb again ms (median) | eight at once ms (median, max) | probe ms (median, p99, max) (answers) |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
await measure('HTTP', overHttp);
await measure('WebSocket', await openSocket());
await measure('SSE', overSse);
// A function serves one request at a time: its probe is an invocation of the same handler.
await measure('Lambda', overLambda, async () => {
  const started = performance.now();
  await overLambda('{ __typename }');
  return performance.now() - started;
});
await app.stop();
await table.stop();
process.exit(0);
