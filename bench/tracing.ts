/**
 * `npm run bench:tracing`: what OpenTelemetry tracing costs the server, in CPU per request.
 *
 * Three copies of the same server (src/main.ts) run side by side on one DynamoDB Local and one
 * table: tracing off, tracing at 1% (`traceidratio` 0.01) and at 100% (`always_on`), both
 * exporting OTLP/HTTP protobuf to a receiver on loopback in this process (it reads each body
 * and answers 200, as a collector does). Resolver spans are off (the default); OTLP metrics are
 * off so that only tracing is measured. The variants take turns, round by round, on the same
 * operation (a user with 20 orders and their products: two DynamoDB requests, so a dozen
 * spans per traced request), and each round's overhead is the traced server's CPU per request
 * over the untraced one's in that round. Prints the median and the range over the rounds.
 *
 *   npm run bench:tracing -- --rounds 3 --seconds 8 --connections 4
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signToken } from '../src/auth/tokens.js';
import { parseCommandLine } from '../src/cli.js';
import { putItems } from '../src/db/batchWrite.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import { demoItems } from '../src/seed/seed.js';
import { runLoad, warmUp } from './load.js';
import type { LoadResult } from './load.js';
import { USER_ORDERS_QUERY } from './operations.js';
import type { Child } from './procs.js';
import { median, range } from './rounds.js';
import { JWT_SECRET, startSystem, SYSTEMS } from './systems.js';

const { values } = parseCommandLine({
  name: 'bench:tracing',
  run: 'npm run bench:tracing --',
  usage: `[--rounds 3] [--seconds 8] [--connections 4]

What OpenTelemetry tracing costs the server in CPU per request: the same server untraced, traced at
1% and at 100%, taking turns round by round on its own DynamoDB Local.

  --rounds <n>        rounds (default 3)
  --seconds <n>       seconds of load per variant and round (default 8)
  --connections <n>   concurrent connections (default 4)`,
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '4' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

/** The collector stand-in: counts what arrives, keeps nothing. */
let exports = 0;
let exportedBytes = 0;
const receiver = http.createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (exportedBytes += chunk.length));
  req.on('end', () => {
    exports += 1;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const collector = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const traced = (sampler: string, ratio: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: collector,
  OTEL_TRACES_SAMPLER: sampler,
  OTEL_TRACES_SAMPLER_ARG: ratio,
  OTEL_METRICS_EXPORTER: 'none',
});
const VARIANTS = [
  { key: 'off', label: 'tracing off', env: {} },
  { key: '1%', label: 'tracing at 1%', env: traced('traceidratio', '0.01'), target: 0.03 },
  { key: '100%', label: 'tracing at 100%', env: traced('always_on', '1'), target: 0.1 },
] as const;

const local = await startLocalDynamo();
const tableName = 'BenchTracing';
const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
await ensureTable(dynamo.client, tableName, local.endpoint);
await putItems(dynamo.doc, tableName, demoItems());
const token = await signToken(
  { userId: 'bench-admin', role: 'admin' },
  { secret: JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' },
);
const headers = { authorization: `Bearer ${token}` };

const children = new Map<string, Child>();
try {
  for (const variant of VARIANTS) {
    children.set(
      variant.key,
      await startSystem(SYSTEMS.server, { endpoint: local.endpoint, tableName, headers, extraEnv: variant.env }),
    );
  }
  const spec = (child: Child, runSeconds: number) => ({
    target: { url: child.url, pid: child.pid },
    dbPid: local.pid,
    operationName: 'UserOrders',
    query: USER_ORDERS_QUERY,
    variables: () => ({ userId: 'alice', after: null }),
    connections,
    seconds: runSeconds,
    headers,
  });
  for (const child of children.values()) await warmUp(spec(child, 2));

  const results = new Map<string, LoadResult[]>(VARIANTS.map((variant) => [variant.key, []]));
  for (let round = 0; round < rounds; round += 1) {
    // A different order each round, so that no variant always runs first (or last).
    const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length] as (typeof VARIANTS)[number]);
    for (const variant of order) {
      const result = await runLoad(spec(children.get(variant.key) as Child, seconds));
      if (result.failures > 0)
        throw new Error(`${variant.label}: ${result.failures} failures: ${result.failureSample}`);
      results.get(variant.key)?.push(result);
      console.error(
        `round ${round + 1} ${variant.label}: ${result.cpuMsPerRequest.toFixed(3)} ms CPU/request, ${result.requestsPerSecond.toFixed(0)} req/s, background ${result.backgroundCores.toFixed(2)} cores`,
      );
    }
  }

  const off = results.get('off') ?? [];
  const pct = (value: number) => `${(value * 100).toFixed(1)} %`;
  console.log(
    `\nOperation UserOrders, ${connections} connections, ${rounds} rounds of ${seconds} s per variant, interleaved.`,
  );
  console.log(`OTLP receiver: ${exports} exports, ${(exportedBytes / 1e6).toFixed(1)} MB.\n`);
  console.log(
    '| variant | CPU per request (median) | req/s (median) | p50 latency (median) | CPU overhead vs off (median, range) | target |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const variant of VARIANTS) {
    const own = results.get(variant.key) ?? [];
    const cpu = median(own.map((result) => result.cpuMsPerRequest));
    const rps = median(own.map((result) => result.requestsPerSecond));
    const p50 = median(own.map((result) => result.latencyMs.p50));
    let overhead = '–';
    let verdict = '–';
    if ('target' in variant) {
      const ratios = own.map((result, i) => result.cpuMsPerRequest / (off[i]?.cpuMsPerRequest ?? NaN) - 1);
      const [low, high] = range(ratios);
      const middle = median(ratios);
      overhead = `${pct(middle)} (${pct(low)} to ${pct(high)})`;
      verdict = `≤ ${pct(variant.target)}: ${middle <= variant.target ? 'met' : 'NOT met'}`;
    }
    console.log(
      `| ${variant.label} | ${cpu.toFixed(3)} ms | ${rps.toFixed(0)} | ${p50.toFixed(2)} ms | ${overhead} | ${verdict} |`,
    );
  }
  const background = median([...results.values()].flat().map((result) => result.backgroundCores));
  console.log(`\nOther load on the machine during the cells (median): ${background.toFixed(2)} cores.`);
} finally {
  for (const child of children.values()) await child.stop();
  dynamo.client.destroy();
  await local.stop();
  receiver.close();
}
