/**
 * `npm run bench:subscriptions`: what one subscription event costs with fresh loaders, and
 * whether subscribe/complete cycles leave anything behind. Starts DynamoDB Local (in memory)
 * and a server with its stream consumer, places orders one at a time and measures, for each
 * order's event: the server's execution of the event (a fresh context and loaders, as logged
 * in its "graphql request" line) and mutation-to-event latency at the client. Then runs the
 * leak check of the tests (test/support/subscriptionCycles.ts) with more cycles.
 *
 *   npm run bench:subscriptions -- --orders 60 --cycles 5000
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { signToken } from '../src/auth/tokens.js';
import { parseCommandLine } from '../src/cli.js';
import { putItems } from '../src/db/batchWrite.js';
import { projectRoot } from '../src/projectRoot.js';
import { demoItems } from '../src/seed/seed.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { waitUntil } from '../test/support/waitUntil.js';
import { BENCH_AUTH, startBenchServer, startBenchTable } from './benchServer.js';

const { values } = parseCommandLine({
  name: 'bench:subscriptions',
  run: 'npm run bench:subscriptions --',
  usage: `[--orders 40] [--cycles 3000]

What one subscription event costs with fresh loaders, and whether subscribe/complete cycles leave
anything behind, on its own DynamoDB Local and server.

  --orders <n>   orders placed one at a time, each event measured (default 40)
  --cycles <n>   subscribe/complete cycles of the leak check (default 3000)`,
  options: { orders: { type: 'string', default: '40' }, cycles: { type: 'string', default: '3000' } },
});
const orders = Number(values.orders);
const cycles = Number(values.cycles);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(2)} ms, p95 ${percentile(sorted, 95).toFixed(2)} ms (n=${sorted.length})`;
};

const table = await startBenchTable('BenchSubscriptions');
await putItems(table.dynamo.doc, table.tableName, demoItems());
const streams = createStreamsClient({ endpoint: table.endpoint, region: 'us-east-1' });

// The server's own account of each WebSocket execution: its "graphql request" log lines.
const eventDurations: number[] = [];
const app = await startBenchServer(table, {
  level: 'info',
  onLog: (entry) => {
    if (entry.msg === 'graphql request' && entry.transport === 'ws' && typeof entry.durationMs === 'number') {
      eventDurations.push(entry.durationMs);
    }
  },
  streams: { client: streams, consumerName: 'bench', pollIntervalMs: 20 },
});

// The demo data's own orders travel through the stream first; they are not part of the measurement.
await app.consumer?.waitUntilCaughtUp(60_000);
eventDurations.length = 0;
const token = await signToken({ userId: 'alice', role: 'customer' }, BENCH_AUTH);
const client = createClient({
  url: app.url.replace(/^http/, 'ws'),
  webSocketImpl: WebSocket,
  connectionParams: { authorization: `Bearer ${token}` },
  retryAttempts: 0,
});
const iterator = client.iterate({
  query: `subscription { orderEvents { type order { orderId status total { amount }
    items { quantity product { name stock } } user { name orders(first: 1) { totalCount } } } } }`,
});
const first = iterator.next();
await waitUntil(() => app.events.subscriberCount > 0, {
  timeoutMs: 10_000,
  intervalMs: 5,
  what: 'the subscription to be registered',
});
const latencies: number[] = [];
for (let i = 0; i < orders; i++) {
  const next = i === 0 ? first : iterator.next();
  const sent = performance.now();
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      query: `mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { order { orderId } } }`,
      variables: {
        input: { userId: 'alice', idempotencyKey: `bench-${i}`, items: [{ productId: 'tent-2p', quantity: 1 }] },
      },
    }),
  });
  const placed = (await response.json()) as { data: { placeOrder: { order: { orderId: string } } } };
  const event = (await next).value as { data?: { orderEvents: { order: { orderId: string } } } } | undefined;
  if (event?.data?.orderEvents.order.orderId !== placed.data.placeOrder.order.orderId) {
    throw new Error('an event of another order arrived: the measurement would be wrong');
  }
  latencies.push(performance.now() - sent);
}
await iterator.return?.();
await client.dispose();
await app.stop();
streams.destroy();

console.log(`subscription event, server execution with fresh loaders: ${summary(eventDurations.slice(1))}`);
console.log(`placeOrder -> event at the client (includes the stream poll): ${summary(latencies.slice(1))}`);

const script = path.join(projectRoot(), 'test', 'support', 'subscriptionCycles.ts');
const { stdout } = await promisify(execFile)(
  process.execPath,
  ['--expose-gc', '--import', 'tsx', script, '--cycles', String(cycles)],
  { env: { ...process.env, DYNAMODB_ENDPOINT: table.endpoint } },
);
const leak = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
console.log(
  `subscribe/complete x${leak.cycles}: heap ${leak.heapBeforeMB} MB -> ${leak.heapAfterMB} MB, ${leak.subscribersLeft} subscriptions left`,
);
await table.stop();
