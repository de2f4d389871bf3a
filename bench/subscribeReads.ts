/**
 * `npm run bench:subscribe-reads`: what one customer opening many subscriptions costs the
 * table. Starts DynamoDB Local (in memory) with customers who have 30 orders each, then, for each
 * mode, a server on it and `--sockets` WebSockets of one customer, each subscribing `--per-socket` times to
 * `orderUpdated` on one of her orders (every socket within WS_MAX_OPERATIONS_PER_SOCKET). Counts
 * the order reads the server sent to DynamoDB (a middleware on its client), the subscriptions
 * opened and refused (RATE_LIMITED), the "DynamoDB unavailable" warnings in its log, and the
 * slowest answer of a probe (one product read every 20 ms) while the subscriptions open.
 *
 * Modes, in one run: `bounded` (the subscribe-read budgets at their defaults) and `unbounded`
 * (budgets out of the way: what the server did before). `--viewers N` spreads the sockets over N
 * customers (each gets sockets / N), to show the per-instance budget.
 *
 *   npm run bench:subscribe-reads -- --sockets 200 --per-socket 25
 */
import WebSocket from 'ws';
import { signToken } from '../src/auth/tokens.js';
import { parseCommandLine } from '../src/cli.js';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import type { QueryLimits } from '../src/config/index.js';
import { createDynamo } from '../src/db/client.js';
import { aProduct, aUser, ordersOf as ordersOfUser, store } from '../test/support/factories.js';
import { BENCH_AUTH, startBenchServer, startBenchTable } from './benchServer.js';

const { values } = parseCommandLine({
  name: 'bench:subscribe-reads',
  run: 'npm run bench:subscribe-reads --',
  usage: `[--sockets 200] [--per-socket 25] [--viewers 1] [--only bounded|unbounded]

What one customer opening many subscriptions costs the table, with the subscribe-read budgets at
their defaults (bounded) and out of the way (unbounded), on its own DynamoDB Local and servers.

  --sockets <n>      WebSockets opened (default 200)
  --per-socket <n>   orderUpdated subscriptions per socket (default 25)
  --viewers <n>      customers the sockets are spread over (default 1)
  --only <mode>      bounded or unbounded only`,
  options: {
    sockets: { type: 'string', default: '200' },
    'per-socket': { type: 'string', default: '25' },
    viewers: { type: 'string', default: '1' },
    only: { type: 'string' },
  },
});
const sockets = Number(values.sockets);
const perSocket = Number(values['per-socket']);
const viewers = Number(values.viewers);

const table = await startBenchTable('BenchSubscribeReads');
// Each viewer watches 30 orders of their own.
const product = aProduct({ stock: 1000 });
const users = Array.from({ length: viewers }, (_, i) => aUser({ userId: `bench-viewer-${i}` }));
const ordersOf = new Map(users.map((user) => [user.userId, ordersOfUser(user, [product], 30)]));
await store(table.dynamo.doc, table.tableName, { users, products: [product], orders: [...ordersOf.values()].flat() });

const UNBOUNDED = 1e12;
interface Outcome {
  reads: number;
  opened: number;
  refused: number;
  other: number;
  warnings: number;
  ms: number;
  probeMaxMs: number;
}

async function run(limits: QueryLimits): Promise<Outcome> {
  let warnings = 0;
  const dynamo = createDynamo({ endpoint: table.endpoint, region: 'us-east-1' });
  let reads = 0;
  dynamo.client.middlewareStack.add(
    (next, context) => async (args) => {
      const read = ['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand'].includes(context.commandName ?? '');
      if (read && JSON.stringify(args.input).includes('ORDER#')) reads += 1;
      return next(args);
    },
    { step: 'initialize', name: 'benchCountOrderReads' },
  );
  const app = await startBenchServer(table, {
    dynamo,
    level: 'warn',
    onLog: (entry) => {
      if (entry.msg === 'DynamoDB unavailable') warnings += 1;
    },
    limits,
  });
  const tokens = new Map(
    await Promise.all(
      users.map(async ({ userId }) => [userId, await signToken({ userId, role: 'customer' }, BENCH_AUTH)] as const),
    ),
  );
  const url = app.url.replace(/^http/, 'ws');
  let refused = 0;
  let other = 0;
  let answered = 0;
  const opened: WebSocket[] = [];
  const started = performance.now();

  // A probe every 20 ms while the subscriptions open.
  let running = true;
  let probeMaxMs = 0;
  const probe = (async () => {
    while (running) {
      const sent = performance.now();
      await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ product(productId: "tent-2p") { name } }' }),
      }).then((response) => response.text());
      probeMaxMs = Math.max(probeMaxMs, performance.now() - sent);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();

  await Promise.all(
    Array.from({ length: sockets }, async (_, s) => {
      const userId = users[s % users.length]!.userId;
      const orders = ordersOf.get(userId)!.map((order) => order.orderId);
      const socket = new WebSocket(url, 'graphql-transport-ws');
      opened.push(socket);
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString()) as { type: string; payload?: unknown };
        if (message.type === 'connection_ack') {
          for (let i = 0; i < perSocket; i++) {
            const orderId = orders[(s * perSocket + i) % orders.length];
            socket.send(
              JSON.stringify({
                id: String(i),
                type: 'subscribe',
                payload: { query: `subscription { orderUpdated(orderId: "${orderId}") { type } }` },
              }),
            );
          }
          return;
        }
        if (message.type === 'next' || message.type === 'error') {
          const text = JSON.stringify(message.payload);
          if (text.includes('RATE_LIMITED')) refused += 1;
          else other += 1;
          answered += 1;
        }
      });
      socket.send(
        JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${tokens.get(userId)}` } }),
      );
    }),
  );
  // Every subscription is either open (registered with the server's events) or answered with an error.
  const total = sockets * perSocket;
  while (app.events.subscriberCount + answered < total) {
    if (performance.now() - started > 300_000) throw new Error('the subscriptions did not settle within 5 minutes');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const ms = performance.now() - started;
  running = false;
  await probe;
  const outcome = { reads, opened: app.events.subscriberCount, refused, other, warnings, ms, probeMaxMs };
  for (const socket of opened) socket.close();
  await app.stop();
  dynamo.client.destroy();
  return outcome;
}

const MODES: [string, QueryLimits][] = [
  ['bounded (defaults)', DEFAULT_LIMITS],
  [
    'unbounded (before)',
    { ...DEFAULT_LIMITS, subscribeReadsPerViewer: UNBOUNDED, subscribeReadsPerInstance: UNBOUNDED },
  ],
];
console.log(
  `${sockets} sockets x ${perSocket} orderUpdated subscriptions from ${viewers} customer(s); ` +
    `budgets per ${DEFAULT_LIMITS.subscribeReadWindowMs} ms: ${DEFAULT_LIMITS.subscribeReadsPerViewer} per viewer, ` +
    `${DEFAULT_LIMITS.subscribeReadsPerInstance} per instance; node ${process.version}`,
);
console.log(
  '| mode | order reads | opened | RATE_LIMITED | other errors | "DynamoDB unavailable" | seconds | probe max ms |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const [name, limits] of MODES) {
  if (values.only && !name.includes(values.only)) continue;
  const o = await run(limits);
  console.log(
    `| ${name} | ${o.reads} | ${o.opened} | ${o.refused} | ${o.other} | ${o.warnings} | ${(o.ms / 1000).toFixed(1)} | ${o.probeMaxMs.toFixed(0)} |`,
  );
}
await table.stop();
