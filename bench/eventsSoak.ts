/**
 * `npm run bench:events`: the change-event targets, measured on the local cluster of three
 * Redis primaries (sharded pub/sub) with 3 API instances and one standalone consumer as child
 * processes on one DynamoDB Local. Prints numbers; never part of `npm test`.
 *
 * (a) fan-out: `--subscriptions` graphql-ws subscriptions to the users' order events, spread over
 *     the 3 instances; rounds of one order per user, placed at the rates of `--order-rate`
 *     (eventsPacing.ts); each event's delivery at each matching subscriber, timed from the
 *     mutation's answer (so it includes the consumer's stream polling), with the orders of the
 *     slowest deliveries taken apart (eventsTail.ts), and the messages an instance with no
 *     listener for a topic receives (its delivery count's change).
 * (b) resume: `--reconnects` SSE reconnects with `Last-Event-ID`, each to another instance than
 *     before, an order of the stream's user placed while it is away each time: lost and
 *     duplicated events counted.
 * (c) faults: `--streams` open subscriptions (half SSE, half graphql-ws) while orders are
 *     placed; a Redis primary is killed for 6 s: each stream either lost nothing or ended with
 *     EVENTS_MISSED, and how long after the kill.
 *
 *   npm run bench:events -- --subscriptions 10000 --reconnects 1000 --streams 300
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import { signToken } from '../src/auth/tokens.js';
import { parseCommandLine } from '../src/cli.js';
import { ChildServers } from '../test/support/childServers.js';
import type { ChildServer } from '../test/support/childServers.js';
import { aProduct, aUser, store } from '../test/support/factories.js';
import { metric as readMetric } from '../test/support/fanOut.js';
import { TEST_AUTH } from '../test/support/harness.js';
import { postGraphQL } from '../test/support/load.js';
import { RedisCluster } from '../test/support/redisCluster.js';
import { SseStream } from '../test/support/sseStream.js';
import { waitUntil } from '../test/support/waitUntil.js';
import { PLACE_ORDER } from '../test/support/writes.js';
import { startBenchTable } from './benchServer.js';
import { InstanceHistogram, readerPages, readerTimesByOrder, spread, wallNow, watchEventLoop } from './eventStages.js';
import {
  AUTO_SHARE,
  MAX_IN_FLIGHT,
  measureCapacity,
  paceName,
  parseRates,
  placeOrders,
  placementLine,
} from './eventsPacing.js';
import type { ReaderTimes } from './eventStages.js';
import type { OrderPace } from './eventsPacing.js';
import { childPid, gcPauses, machineLine, MachineSampler, slowestOrders } from './eventsTail.js';
import type { OrderTrace } from './eventsTail.js';

const { values } = parseCommandLine({
  name: 'bench:events',
  run: 'npm run bench:events --',
  usage: `[--subscriptions 10000] [--users 200] [--reconnects 1000] [--streams 300] [--phases fanout,resume,faults] [--products 200] [--order-rate max,auto] [--arrivals poisson] [--cpu-prof <dir>]

The change-event targets on a local cluster of three Redis primaries, 3 API instances and a
consumer: fan-out delivery p99 and idle instances, resume across instances, a killed primary.

  --subscriptions <n>  graphql-ws subscriptions over the 3 instances (default 10000)
  --users <n>          users they listen to, one topic each (default 200)
  --reconnects <n>     SSE reconnects with Last-Event-ID, each to another instance (default 1000)
  --streams <n>        streams open while a primary is killed (default 300)
  --phases <list>      which of fanout, resume and faults to run (default all three)
  --products <n>       products the orders are spread over, user i ordering product i mod n
                       (default 200; 1 puts every order and soldCount update on one item)
  --order-rate <list>  the fan-out's rounds of orders (one per user each), comma-separated: a rate
                       in orders per second (open loop), auto (half of what DynamoDB Local
                       alone sustains of placeOrder's work, measured first) or max (closed loop,
                       10 in flight as fast as they answer: DynamoDB Local's queue kept full)
                       (default max,auto)
  --arrivals <kind>    open-loop sends: poisson (seeded exponential gaps) or even (default poisson)
  --cpu-prof <dir>     the second API instance (one that serves no mutation, only events) runs
                       with node --cpu-prof and writes its CPU profile into <dir> when it is
                       stopped (SIGTERM) at the end`,
  options: {
    subscriptions: { type: 'string', default: '10000' },
    users: { type: 'string', default: '200' },
    reconnects: { type: 'string', default: '1000' },
    streams: { type: 'string', default: '300' },
    phases: { type: 'string', default: 'fanout,resume,faults' },
    products: { type: 'string', default: '200' },
    'order-rate': { type: 'string', default: 'max,auto' },
    arrivals: { type: 'string', default: 'poisson' },
    'cpu-prof': { type: 'string' },
  },
});
const SUBSCRIPTIONS = Number(values.subscriptions);
const USERS = Number(values.users);
const RECONNECTS = Number(values.reconnects);
const STREAMS = Number(values.streams);
const PRODUCTS = Number(values.products);
const RATES = parseRates(values['order-rate']);
const ARRIVALS = values.arrivals;
if (ARRIVALS !== 'poisson' && ARRIVALS !== 'even')
  throw new Error(`--arrivals: "${ARRIVALS}" is neither poisson nor even`);
const PHASES = new Set(values.phases.split(',').map((phase) => phase.trim()));
for (const phase of PHASES) {
  if (!['fanout', 'resume', 'faults'].includes(phase)) throw new Error(`--phases: no phase "${phase}"`);
}
const DELIVERIES = 'tablegraph_event_bus_delivery_seconds_count';
const QUERY = 'subscription { orderEvents { type order { orderId } } }';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const out = (line: string) => console.info(line);

// DynamoDB Local's JVM logs its garbage collection (JAVA_TOOL_OPTIONS reaches only that java child).
const gcLog = path.join(os.tmpdir(), `bench-events-gc-${process.pid}.log`);
const javaOptions = process.env.JAVA_TOOL_OPTIONS;
process.env.JAVA_TOOL_OPTIONS = `${javaOptions ?? ''} -Xlog:gc:file=${gcLog}:time`.trim();
const table = await startBenchTable('BenchEvents');
if (javaOptions === undefined) delete process.env.JAVA_TOOL_OPTIONS;
else process.env.JAVA_TOOL_OPTIONS = javaOptions;
const javaPid = childPid('java');
const redis = await RedisCluster.start();
const children = new ChildServers();
const clients: Client[] = [];
// Each product is one item that every order of it and its soldCount update write: orders of one
// product placed together conflict (retried), which is not what the fan-out measures.
const products = Array.from({ length: PRODUCTS }, () => aProduct({ stock: 10_000_000 }));
const users = Array.from({ length: USERS + 1 }, () => aUser());
const lonely = users.pop()!;
// The capacity probe's own customers and products, so that no order of a measured user precedes it.
const probeUsers = Array.from({ length: MAX_IN_FLIGHT }, () => aUser());
const probeProducts = Array.from({ length: MAX_IN_FLIGHT }, () => aProduct({ stock: 10_000_000 }));
await store(table.dynamo.doc, table.tableName, {
  users: [...users, lonely, ...probeUsers],
  products: [...products, ...probeProducts],
});
// What DynamoDB Local alone sustains of placeOrder's work, before anything else of the bench
// runs (for the fan-out's rounds only).
const capacity = PHASES.has('fanout')
  ? await measureCapacity(
      table.dynamo,
      table.tableName,
      probeUsers.map((user, i) => ({ userId: user.userId, productId: probeProducts[i]!.productId })),
    )
  : undefined;
const autoRate = Math.max(1, Math.round((capacity?.saturatedPerSecond ?? 0) * AUTO_SHARE));
const paces: OrderPace[] = RATES.map((rate) => (rate === 'auto' ? { kind: 'rate', perSecond: autoRate } : rate));
const bounds = {
  WS_MAX_SOCKETS: '20000',
  WS_MAX_OPERATIONS_PER_SOCKET: '200',
  CLIENT_MAX_CONNECTIONS: '20000',
  CLIENT_MAX_SUBSCRIPTIONS: '20000',
  SUBSCRIBE_READS_PER_INSTANCE: '1000000',
  SUBSCRIBE_READS_PER_VIEWER: '1000000',
  // Hundreds of sockets open at once on a busy machine: their connection_init may come late.
  WS_CONNECTION_INIT_TIMEOUT_MS: '30000',
};
const apiEnv = { ...redis.env, STREAM_CONSUMER: 'false', ...bounds };
const profileDir = values['cpu-prof'];
/** The instance profiled: the mutations all go to apis[0], so another one shows the fan-out alone. */
const PROFILED = 1;
const apis: ChildServer[] = await Promise.all(
  [0, 1, 2].map((i) =>
    children.start(table.endpoint, table.tableName, {
      ...apiEnv,
      ...(i === PROFILED && profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
    }),
  ),
);
// At debug, the consumer logs when each page was read and each event published (eventStages.ts).
const consumer = await children.startConsumer(table.endpoint, table.tableName, {
  ...redis.env,
  STREAM_POLL_MS: '50',
  LOG_LEVEL: 'debug',
});
const admin = `Bearer ${await signToken({ userId: 'bench-admin', role: 'admin' }, TEST_AUTH)}`;
const tokens = new Map<string, string>();
for (const user of [...users, lonely])
  tokens.set(user.userId, await signToken({ userId: user.userId, role: 'customer' }, TEST_AUTH));

let orderRetries = 0;
/** Places an order for `userId` (of its product); a conflict (orders placed at once) is tried again. */
async function placeOrder(userId: string, attempt = 1): Promise<string> {
  const u = users.findIndex((user) => user.userId === userId);
  const product = products[Math.max(0, u) % products.length]!;
  const result = await postGraphQL(apis[0]!.url, admin, PLACE_ORDER, {
    input: { userId, idempotencyKey: randomUUID(), items: [{ productId: product.productId, quantity: 1 }] },
  });
  const orderId = (result.body?.data as { placeOrder?: { order?: { orderId: string } } } | undefined)?.placeOrder?.order
    ?.orderId;
  if (orderId) return orderId;
  orderRetries++;
  if (attempt < 10) return placeOrder(userId, attempt + 1);
  throw new Error(`placeOrder failed: ${JSON.stringify(result.body ?? result.failure)}`);
}

/** Subscribes `count` times over one graphql-ws socket of `userId` at `api`; `heard` is told each order id. */
function wsSubscriptions(
  api: ChildServer,
  userId: string,
  count: number,
  heard: (orderId: string) => void,
  ended: (code: string) => void,
) {
  const client = createClient({
    url: api.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${tokens.get(userId)}` },
    retryAttempts: 0,
  });
  clients.push(client);
  for (let i = 0; i < count; i++)
    client.subscribe<{ orderEvents: { order: { orderId: string } } }>(
      { query: QUERY },
      {
        next: (result) => {
          const orderId = result.data?.orderEvents.order.orderId;
          if (orderId) heard(orderId);
        },
        error: (error) =>
          ended(
            (Array.isArray(error) ? (error[0] as { extensions?: { code?: string } })?.extensions?.code : undefined) ??
              'error',
          ),
        complete: () => ended('complete'),
      },
    );
  return client;
}

/**
 * A metric of a child, read again once when the read fails: on a loaded machine a kept-alive
 * connection the server is closing at that moment resets (ECONNRESET).
 */
const metric = (server: ChildServer, name: string) => readMetric(server, name).catch(() => readMetric(server, name));

/** The warning and error lines of `servers` so far, counted by message (and reason, when the line gives one). */
const warningsOf = (servers: ChildServer[]) => {
  const counts = new Map<string, number>();
  for (const [i, server] of servers.entries()) {
    for (const line of server.node.logs) {
      if (line.level < 40) continue;
      const reason = typeof line.reason === 'string' ? ` (${line.reason})` : '';
      const key = `${i < servers.length - 1 ? `api ${i}` : 'consumer'}: ${line.msg}${reason}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts.size === 0 ? 'none' : JSON.stringify(Object.fromEntries(counts));
};

/** Closes a client's socket; one that never connected has nothing to close (its dispose() rejects). */
const dispose = (client: Client) => void Promise.resolve(client.dispose()).catch(() => undefined);

/** The 1, 5 and 15 minute load averages: how busy the machine is (2 cores, shared). */
const loadAverage = () =>
  os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(' ');
/** Each instance's longest event-loop delay since the last read (prom-client resets it on every read). */
const eventLoopLag = async (servers: ChildServer[]) =>
  (await Promise.all(servers.map((api) => metric(api, 'nodejs_eventloop_lag_max_seconds'))))
    .map((seconds) => `${(seconds * 1000).toFixed(0)} ms`)
    .join(', ');

/** Each instance's CPU time so far (s): what the phase cost it, whatever else ran on the machine meanwhile. */
const cpuSeconds = (servers: ChildServer[]) =>
  Promise.all(servers.map((api) => metric(api, 'process_cpu_seconds_total')));

const activeSubscriptions = async () =>
  (await Promise.all(apis.map((api) => metric(api, 'graphql_subscriptions_active')))).reduce((a, b) => a + b, 0);

try {
  if (PHASES.has('fanout')) {
    // (a) Fan-out.
    const perUser = Math.ceil(SUBSCRIPTIONS / USERS);
    /** Each order's receipts at its subscribers, with the instance each listened on. */
    const arrivals = new Map<string, { at: number; instance: number }[]>();
    const heardOn = (instance: number) => (orderId: string) => {
      const receipt = { at: wallNow(), instance };
      const list = arrivals.get(orderId);
      if (list) list.push(receipt);
      else arrivals.set(orderId, [receipt]);
    };
    let opened = 0;
    const endings = new Map<string, number>();
    const ended = (code: string) => endings.set(code, (endings.get(code) ?? 0) + 1);
    /** The subscriptions of each user, and the (instance, user) topics they make. */
    const subscribedBy = new Map<string, number>();
    const topicsOpened = new Set<string>();
    for (const [u, user] of users.entries()) {
      // Each user's subscriptions spread over the three instances.
      for (let i = 0; i < 3 && opened < SUBSCRIPTIONS; i++) {
        const count = Math.min(Math.ceil(perUser / 3), SUBSCRIPTIONS - opened);
        if (count <= 0) break;
        const instance = (u + i) % 3;
        wsSubscriptions(apis[instance]!, user.userId, count, heardOn(instance), ended);
        subscribedBy.set(user.userId, (subscribedBy.get(user.userId) ?? 0) + count);
        topicsOpened.add(`${instance} ${user.userId}`);
        opened += count;
      }
    }
    const openStart = performance.now();
    // Open, or ended (a socket refused or closed: counted in `endings` and reported below).
    const endedCount = () => [...endings.values()].reduce((a, b) => a + b, 0);
    await waitUntil(async () => (await activeSubscriptions()) + endedCount() >= opened, {
      timeoutMs: 300_000,
      intervalMs: 500,
      what: `${opened} subscriptions open`,
    });
    // Their topics' subscriptions in place on Redis: a subscription hears what is published from then on.
    const topicsWanted = topicsOpened.size;
    await waitUntil(
      async () =>
        (await Promise.all(apis.map((api) => metric(api, 'tablegraph_event_bus_topics')))).reduce((a, b) => a + b, 0) >=
        topicsWanted,
      { timeoutMs: 30_000, intervalMs: 200, what: `${topicsWanted} topics subscribed` },
    ).catch(async (error: unknown) => {
      const counts = await Promise.all(apis.map((api) => metric(api, 'tablegraph_event_bus_topics')));
      out(`(a) ${String(error)}: subscribed per instance ${counts.join(', ')}`);
    });
    out(
      `(a) ${opened} graphql-ws subscriptions over 3 instances (${USERS} users, ${perUser} each) open in ${((performance.now() - openStart) / 1000).toFixed(1)} s`,
    );
    if (capacity)
      out(
        `(a) DynamoDB Local alone, placeOrder's work (BatchGetItem + TransactWriteItems) in process: one at a time ${capacity.alonePerSecond.toFixed(1)}/s (${spread(capacity.aloneMs)}); ${MAX_IN_FLIGHT} at a time ${capacity.saturatedPerSecond.toFixed(1)}/s (${spread(capacity.saturatedMs)}); auto = ${AUTO_SHARE} × ${capacity.saturatedPerSecond.toFixed(1)} = ${autoRate}/s`,
      );
    const processNames = ['DynamoDB Local', 'consumer', 'api 0', 'api 1', 'api 2'];
    const machine = new MachineSampler([
      javaPid ?? NaN,
      consumer.node.child.pid ?? NaN,
      ...apis.map((api) => api.node.child.pid ?? NaN),
    ]);
    machine.start();
    const summary: string[] = [];
    for (const pace of paces) {
      const name = paceName(pace);
      const answered = new Map<string, { sentAt: number; answeredAt: number }>();
      const delivery = new InstanceHistogram(apis, 'tablegraph_event_bus_delivery_seconds');
      const fanOut = new InstanceHistogram(apis, 'tablegraph_event_fanout_seconds');
      const [cpuBefore] = await Promise.all([cpuSeconds(apis), delivery.start(), fanOut.start(), eventLoopLag(apis)]);
      const loadBefore = loadAverage();
      const ownLoop = watchEventLoop();
      const failuresBefore = await metric(consumer, 'tablegraph_stream_record_failures_total');
      const retriesBefore = orderRetries;
      const roundStart = wallNow();
      /** The round's orders, in the users' order. */
      const placed: string[] = [];
      const placement = await placeOrders(
        users.map((user) => user.userId),
        pace,
        ARRIVALS,
        async (userId) => {
          const sentAt = wallNow();
          const orderId = await placeOrder(userId);
          answered.set(orderId, { sentAt, answeredAt: wallNow() });
          placed[users.findIndex((user) => user.userId === userId)] = orderId;
        },
      );
      const expected = opened;
      await waitUntil(() => placed.reduce((n, id) => n + (arrivals.get(id)?.length ?? 0), 0) >= expected, {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: `${expected} deliveries`,
      }).catch((error: unknown) => out(`(a) ${String(error)}`));
      const roundEnd = wallNow();
      const latencies = placed
        .flatMap((id) => (arrivals.get(id) ?? []).map(({ at }) => at - (answered.get(id)?.answeredAt ?? at)))
        .sort((a, b) => a - b);
      const headline = `deliveries ${latencies.length} of ${expected}; from the mutation's answer to the subscriber: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${(latencies.at(-1) ?? NaN).toFixed(0)} ms`;
      out(
        `(a) orders at ${name}, ${ARRIVALS === 'even' || pace.kind === 'max' ? '' : 'poisson, '}${placementLine(placement)}`,
      );
      out(`(a) ${headline}`);
      summary.push(`    ${name}: ${placement.achievedPerSecond.toFixed(1)}/s achieved; ${headline}`);
      const clientLoop = ownLoop.stop();
      // Read first: any other read of /metrics resets prom-client's event-loop figures.
      const instanceLoops = await eventLoopLag(apis);
      const instanceCpu = (await cpuSeconds(apis)).map((seconds, i) => `${(seconds - cpuBefore[i]!).toFixed(2)} s`);
      const reader = readerTimesByOrder(consumer.node.logs);
      const stage = (of: (id: string, times: ReaderTimes, answer: number) => number[]) =>
        spread(
          placed.flatMap((id) => {
            const times = reader.get(id);
            const answer = answered.get(id)?.answeredAt;
            return times && answer !== undefined ? of(id, times, answer) : [];
          }),
        );
      out(`(a) where the time goes (load average ${loadBefore} before, ${loadAverage()} after):`);
      out(`    answer → page read by the stream reader (per event):        ${stage((_, t, a) => [t.readAt - a])}`);
      out(
        `    page read → event published (per event):                    ${stage((_, t) => [t.publishedAt - t.readAt])}`,
      );
      out(
        `      page read → lease found current (alongside):              ${stage((_, t) => (t.checkedAt === undefined ? [] : [t.checkedAt - t.readAt]))}`,
      );
      out(
        `      page read → every record of its page applied (soldCount): ${stage((_, t) => [t.processedAt - t.readAt])}`,
      );
      for (const line of readerPages(consumer.node.logs, roundStart)) out(`      ${line}`);
      out(`    published → instance receipt (per event and instance):      ${await delivery.spread()}`);
      out(`    receipt → answer ready for the socket (per subscriber):     ${await fanOut.spread()}`);
      out(
        `    published → client receipt (per subscriber):                ${stage((id, t) => (arrivals.get(id) ?? []).map(({ at }) => at - t.publishedAt))}`,
      );
      out(
        `    conflicts on the products' items: ${orderRetries - retriesBefore} orders placed again, ${(await metric(consumer, 'tablegraph_stream_record_failures_total')) - failuresBefore} stream records retried`,
      );
      out(`    event loop delay: the bench's client ${clientLoop}; the instances' max ${instanceLoops}`);
      out(`    the instances' CPU time meanwhile (the first also serves the mutations): ${instanceCpu.join(', ')}`);
      const pauses = gcPauses(gcLog);
      out(`    the machine meanwhile: ${machineLine(machine, roundStart, roundEnd, pauses, processNames)}`);
      const traces: OrderTrace[] = placed.map((orderId, index) => ({
        index,
        orderId,
        sentAt: answered.get(orderId)?.sentAt ?? NaN,
        answeredAt: answered.get(orderId)?.answeredAt ?? NaN,
        reader: reader.get(orderId),
        receipts: arrivals.get(orderId) ?? [],
      }));
      out(
        `    the orders of the slowest 1% of deliveries (ms; the last receipt on each instance counted from the publish call's answer, so it can be negative):`,
      );
      for (const line of slowestOrders(traces, roundStart, machine, pauses, processNames)) out(`      ${line}`);
      const missingBy = new Map<string, number>();
      for (const [u, id] of placed.entries()) {
        const short = (subscribedBy.get(users[u]!.userId) ?? 0) - (arrivals.get(id)?.length ?? 0);
        if (short > 0) missingBy.set(users[u]!.userId, short);
      }
      out(`(a) users whose subscribers missed their order: ${missingBy.size} (${[...missingBy.values()].join(', ')})`);
    }
    machine.stop();
    out(`(a) summary, by round (in the order run):`);
    for (const line of summary) out(line);
    out(`    warnings logged: ${warningsOf([...apis, consumer])}`);
    out(`(a) subscriptions ended early: ${JSON.stringify(Object.fromEntries(endings))}`);
    for (const client of clients.splice(0)) dispose(client);
    await waitUntil(async () => (await activeSubscriptions()) === 0, {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'subscriptions closed',
    });
    // An instance with no listener for a topic: only apis[0] listens to the lonely user's orders.
    const lonelyHeard: string[] = [];
    wsSubscriptions(
      apis[0]!,
      lonely.userId,
      1,
      (orderId) => lonelyHeard.push(orderId),
      () => undefined,
    );
    await waitUntil(async () => (await activeSubscriptions()) === 1, {
      timeoutMs: 10_000,
      what: 'the lonely subscription',
    });
    const before = await Promise.all(apis.map((api) => metric(api, DELIVERIES)));
    const lonelyOrder = await placeOrder(lonely.userId);
    await waitUntil(() => lonelyHeard.includes(lonelyOrder), { timeoutMs: 10_000, what: 'the lonely order heard' });
    const after = await Promise.all(apis.map((api) => metric(api, DELIVERIES)));
    out(
      `(a) messages of one order's topics received: the listening instance ${after[0]! - before[0]!}, the idle ones ${after[1]! - before[1]!} and ${after[2]! - before[2]!}`,
    );
    for (const client of clients.splice(0)) dispose(client);
  }
  if (PHASES.has('resume')) {
    // (b) Resume on another instance.
    const resumers = Math.min(20, USERS);
    let lost = 0;
    let duplicated = 0;
    let missedSignals = 0;
    const resumeStart = performance.now();
    await Promise.all(
      users.slice(0, resumers).map(async (user, s) => {
        const token = tokens.get(user.userId)!;
        const seen = new Set<string>();
        let lastId: string | undefined;
        const cycles = Math.ceil(RECONNECTS / resumers);
        for (let c = 0; c < cycles; c++) {
          // Without an event id yet, nothing can be resumed: the stream opens (subscribed) first.
          const fresh = lastId === undefined;
          let orderId = fresh ? '' : await placeOrder(user.userId);
          const stream = await SseStream.open(apis[(s + c) % 3]!.url, token, lastId, QUERY);
          if (fresh) orderId = await placeOrder(user.userId);
          const deadline = setTimeout(() => stream.close(), 10_000);
          try {
            for (;;) {
              const event = await stream.next();
              if (event.event !== 'next') throw new Error(`stream ended: ${event.event}`);
              const data = JSON.parse(event.data) as {
                data?: { orderEvents: { order: { orderId: string } } };
                errors?: { extensions?: { code?: string } }[];
              };
              if (data.errors?.[0]?.extensions?.code === 'EVENTS_MISSED') missedSignals++;
              const id = data.data?.orderEvents.order.orderId;
              if (!id) continue;
              if (seen.has(id)) duplicated++;
              seen.add(id);
              lastId = event.id;
              if (id === orderId) break;
            }
          } catch (error) {
            lost++;
            out(
              `(b) lost: ${user.userId}'s reconnect ${c} to instance ${(s + c) % 3} after ${lastId ?? 'no event'} did not bring order ${orderId} (${String(error)})`,
            );
          } finally {
            clearTimeout(deadline);
            stream.close();
          }
        }
      }),
    );
    out(
      `(b) ${resumers * Math.ceil(RECONNECTS / resumers)} SSE reconnects with Last-Event-ID, each to another instance, an order placed while away each time: lost ${lost}, duplicated ${duplicated}, EVENTS_MISSED ${missedSignals}, in ${((performance.now() - resumeStart) / 1000).toFixed(1)} s`,
    );
  }
  if (PHASES.has('faults')) {
    // (c) A primary killed while streams are open.
    const faulted = users.slice(0, Math.min(STREAMS, USERS));
    const perStream = faulted.map(() => ({
      heard: new Set<string>(),
      endedWith: undefined as string | undefined,
      endedAt: 0,
    }));
    const sses: SseStream[] = [];
    await Promise.all(
      faulted.map(async (user, s) => {
        const record = perStream[s]!;
        const end = (code: string) => {
          record.endedWith ??= code;
          record.endedAt ||= performance.now();
        };
        if (s % 2 === 0) {
          wsSubscriptions(apis[s % 3]!, user.userId, 1, (orderId) => record.heard.add(orderId), end);
          return;
        }
        const stream = await SseStream.open(apis[s % 3]!.url, tokens.get(user.userId)!, undefined, QUERY);
        sses.push(stream);
        void (async () => {
          for (;;) {
            const event = await stream.next();
            if (event.event !== 'next') return end(event.event);
            const data = JSON.parse(event.data) as {
              data?: { orderEvents: { order: { orderId: string } } };
              errors?: { extensions?: { code?: string } }[];
            };
            const code = data.errors?.[0]?.extensions?.code;
            if (code) return end(code);
            const id = data.data?.orderEvents.order.orderId;
            if (id) record.heard.add(id);
          }
        })().catch(() => end('ended without a word'));
      }),
    );
    await waitUntil(async () => (await activeSubscriptions()) >= faulted.length, {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'the streams open',
    });
    const placedFor = faulted.map(() => [] as string[]);
    let placing = true;
    const placer = (async () => {
      for (let n = 0; placing; n++) {
        const s = n % faulted.length;
        placedFor[s]!.push(await placeOrder(faulted[s]!.userId));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const victim = redis.nodes[0]!;
    const killedAt = performance.now();
    await victim.kill();
    await new Promise((resolve) => setTimeout(resolve, 6000));
    await redis.restart(victim);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    placing = false;
    await placer;
    // Every order placed so far has had time to arrive at a stream still open.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    let intact = 0;
    let missedInTime = 0;
    let late = 0;
    let silentLoss = 0;
    const endMs: number[] = [];
    for (const [s, record] of perStream.entries()) {
      if (record.endedWith === 'EVENTS_MISSED') {
        const ms = record.endedAt - killedAt;
        endMs.push(ms);
        if (ms <= 5000) missedInTime++;
        else late++;
        continue;
      }
      const missing = placedFor[s]!.filter((id) => !record.heard.has(id));
      if (missing.length === 0 && record.endedWith === undefined) intact++;
      else silentLoss++;
    }
    endMs.sort((a, b) => a - b);
    out(
      `(c) ${faulted.length} streams (half SSE, half graphql-ws), ${placedFor.flat().length} orders placed, a primary killed for 6 s: ${intact} lost nothing, ${missedInTime} ended with EVENTS_MISSED within 5 s (p50 ${percentile(endMs, 50).toFixed(0)} ms, max ${(endMs.at(-1) ?? NaN).toFixed(0)} ms after the kill), ${late} later, ${silentLoss} with a silent loss or another end`,
    );
    for (const stream of sses) stream.close();
  }
} catch (error) {
  // A child that died says why on its stderr.
  for (const [i, child] of [...apis, consumer].entries()) {
    if (child.node.child.exitCode !== null || child.node.child.signalCode !== null)
      out(`${i < apis.length ? `api ${i}` : 'consumer'} exited: ${child.node.stderr().slice(-2000)}`);
  }
  throw error;
} finally {
  for (const client of clients) dispose(client);
  // Stopped, not killed: node writes the CPU profile on its way out.
  if (profileDir && apis[PROFILED]) await children.stop(apis[PROFILED]);
  await children.killAll();
  await redis.dispose();
  await table.stop();
  rmSync(gcLog, { force: true });
}
process.exit(0);
