/**
 * `npm run bench:clients`: one customer tries to hold the server's streaming transports, and
 * another client is served meanwhile. Starts DynamoDB Local (in memory) with the demo data and
 * the server as deployed (a process of its own, production mode, MAX_CONNECTIONS 1,000 and the
 * per-client bounds at their defaults). alice, in a third process (bench/clientFlood.ts), then
 * tries to open `--attempts` Server-Sent Events streams of `orderEvents` (each would live until
 * her token expires), 50 at a time, then as many WebSockets, and keeps what she got. Throughout,
 * bob reads a product every 10 ms from this process, on a new TCP connection each time as a new
 * visitor would, with a 5 s timeout.
 *
 * Printed: what alice held and was refused per transport, and bob's answers (median, p99, max,
 * failures) before, while alice opens her streams and sockets, and while she holds them.
 *
 *   npm run bench:clients                    the per-client bounds at their defaults
 *   npm run bench:clients -- --unbounded     the per-client bounds out of the way (the server before)
 *   npm run bench:clients -- --attempts 500
 */
import { parseCommandLine } from '../src/cli.js';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { signToken } from '../src/auth/tokens.js';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { startBenchTable } from './benchServer.js';
import { probeOnNewConnection } from './probe.js';
import { PROJECT_ROOT } from './procs.js';
import { JWT_SECRET, startSystem, SYSTEMS } from './systems.js';

const { values } = parseCommandLine({
  name: 'bench:clients',
  run: 'npm run bench:clients --',
  usage: `[--attempts <n>] [--unbounded]

One customer tries to open <n> SSE streams, then <n> WebSockets, while another client keeps
asking; prints what the customer held and the other client's latency, phase by phase.

  --attempts <n>   connections the customer tries per transport (default 1000)
  --unbounded      the server without per-client bounds, for comparison`,
  options: {
    unbounded: { type: 'boolean', default: false },
    attempts: { type: 'string', default: '1000' },
  },
});

const table = await startBenchTable('BenchClientBounds');
await putItems(table.dynamo.doc, table.tableName, demoItems());
const auth = { secret: JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' };
const [alice, bob] = await Promise.all([
  signToken({ userId: 'alice', role: 'customer' }, auth),
  signToken({ userId: 'bob', role: 'customer' }, auth),
]);
const server = await startSystem(SYSTEMS.server, {
  endpoint: table.endpoint,
  tableName: table.tableName,
  headers: {},
  extraEnv: values.unbounded ? { CLIENT_MAX_CONNECTIONS: '1000000', CLIENT_MAX_SUBSCRIPTIONS: '1000000' } : {},
});
/** bob's product read on a new connection: its ms, or Infinity when it failed or took over 5 s. */
const probe = () =>
  probeOnNewConnection({
    url: server.url,
    query: '{ product(productId: "tent-2p") { name } }',
    headers: { authorization: `Bearer ${bob}` },
  });

interface Phase {
  phase: string;
  held?: number;
  refused?: number;
  failed?: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
function row(name: string, tally: Phase | undefined, answers: number[]): void {
  const ok = answers.filter(Number.isFinite).sort((a, b) => a - b);
  const shown = tally ? `${tally.held} | ${tally.refused} | ${tally.failed}` : '– | – | –';
  console.log(
    `| ${name} | ${shown} | ${percentile(ok, 50).toFixed(1)} | ${percentile(ok, 99).toFixed(1)} | ${(ok.at(-1) ?? NaN).toFixed(1)} | ${answers.length - ok.length} of ${answers.length} |`,
  );
}

/** bob's answers until `until` resolves, two seconds at least. */
async function probeUntil(until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.then(() => (done = true));
  const answers: number[] = [];
  const least = performance.now() + 2000;
  while (!done || performance.now() < least) {
    answers.push(await probe());
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return answers;
}

await probe(); // warm the route
console.log(
  `${values.unbounded ? 'per-client bounds out of the way' : 'per-client bounds at their defaults'}; ${values.attempts} attempts per transport; node ${process.version}; server, alice and bob in three processes`,
);
console.log('| phase | alice held | refused | failed | bob ms median | p99 | max | bob failed |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
row('quiet', undefined, await probeUntil(Promise.resolve()));

const flood = spawn(process.execPath, ['--import', 'tsx', 'bench/clientFlood.ts'], {
  cwd: PROJECT_ROOT,
  env: { ...process.env, URL: server.url, TOKEN: alice, ATTEMPTS: values.attempts },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const lines = createInterface({ input: flood.stdout })[Symbol.asyncIterator]();
const next = async (): Promise<Phase> => JSON.parse((await lines.next()).value ?? '{}') as Phase;
const LABELS: Record<string, string> = { sse: 'alice opens SSE streams', ws: 'alice opens WebSockets' };
for (const expected of ['sse', 'ws']) {
  const finished = next();
  const answers = await probeUntil(finished);
  const tally = await finished;
  if (tally.phase !== expected)
    throw new Error(`clientFlood: expected phase ${expected}, got ${JSON.stringify(tally)}`);
  row(LABELS[expected] ?? expected, tally, answers);
}
await next(); // holding
row('alice holds what she got', undefined, await probeUntil(Promise.resolve()));
flood.kill('SIGTERM');
await new Promise((resolve) => flood.once('exit', resolve));
await server.stop();
await table.stop();
