/**
 * Phase (a) of `npm run bench:events` (eventsSoak.ts), the fan-out: `--subscriptions` graphql-ws
 * subscriptions to the users' order events, spread over the 3 instances; rounds of one order per
 * user, placed at the rates of `--order-rate` (eventsPacing.ts); each event's delivery at each
 * matching subscriber, timed from the mutation's answer (so it includes the consumer's stream
 * polling), where the time goes stage by stage (eventStages.ts), the orders of the slowest
 * deliveries taken apart (eventsTail.ts), and the messages an instance with no listener for a
 * topic receives (its delivery count's change).
 */
import os from 'node:os';
import type { ChildServer } from '../test/support/childServers.js';
import { waitUntil } from '../test/support/waitUntil.js';
import {
  InstanceHistogram,
  percentile,
  readerPages,
  readerTimesByOrder,
  spread,
  wallNow,
  watchEventLoop,
} from './eventStages.js';
import type { ReaderTimes } from './eventStages.js';
import { AUTO_SHARE, MAX_IN_FLIGHT, paceName, placeOrders, placementLine } from './eventsPacing.js';
import type { OrderPace } from './eventsPacing.js';
import { dispose, metric, out } from './eventsRig.js';
import type { EventsRig } from './eventsRig.js';
import { gcPauses, machineLine, MachineSampler, slowestOrders } from './eventsTail.js';
import type { OrderTrace } from './eventsTail.js';

export interface FanOutOptions {
  /** Subscriptions over the 3 instances. */
  subscriptions: number;
  /** Users they listen to (`--users`). */
  users: number;
  /** The rounds of orders, `auto` a share of the capacity the rig measured. */
  rates: ('auto' | OrderPace)[];
  /** How open-loop orders arrive. */
  arrivals: 'poisson' | 'even';
}

const DELIVERIES = 'tablegraph_event_bus_delivery_seconds_count';

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

/** Runs the fan-out on `rig` and prints its lines, `(a) …`. */
export async function runFanOut(rig: EventsRig, options: FanOutOptions): Promise<void> {
  const { apis, consumer, users } = rig;
  const autoRate = Math.max(1, Math.round((rig.capacity?.saturatedPerSecond ?? 0) * AUTO_SHARE));
  const paces: OrderPace[] = options.rates.map((rate) =>
    rate === 'auto' ? { kind: 'rate', perSecond: autoRate } : rate,
  );
  // (a) Fan-out.
  const perUser = Math.ceil(options.subscriptions / options.users);
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
    for (let i = 0; i < 3 && opened < options.subscriptions; i++) {
      const count = Math.min(Math.ceil(perUser / 3), options.subscriptions - opened);
      if (count <= 0) break;
      const instance = (u + i) % 3;
      rig.wsSubscriptions(apis[instance]!, user.userId, count, heardOn(instance), ended);
      subscribedBy.set(user.userId, (subscribedBy.get(user.userId) ?? 0) + count);
      topicsOpened.add(`${instance} ${user.userId}`);
      opened += count;
    }
  }
  const openStart = performance.now();
  // Open, or ended (a socket refused or closed: counted in `endings` and reported below).
  const endedCount = () => [...endings.values()].reduce((a, b) => a + b, 0);
  await waitUntil(async () => (await rig.activeSubscriptions()) + endedCount() >= opened, {
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
    `(a) ${opened} graphql-ws subscriptions over 3 instances (${options.users} users, ${perUser} each) open in ${((performance.now() - openStart) / 1000).toFixed(1)} s`,
  );
  if (rig.capacity)
    out(
      `(a) DynamoDB Local alone, placeOrder's work (BatchGetItem + TransactWriteItems) in process: one at a time ${rig.capacity.alonePerSecond.toFixed(1)}/s (${spread(rig.capacity.aloneMs)}); ${MAX_IN_FLIGHT} at a time ${rig.capacity.saturatedPerSecond.toFixed(1)}/s (${spread(rig.capacity.saturatedMs)}); auto = ${AUTO_SHARE} × ${rig.capacity.saturatedPerSecond.toFixed(1)} = ${autoRate}/s`,
    );
  const processNames = ['DynamoDB Local', 'consumer', 'api 0', 'api 1', 'api 2'];
  const machine = new MachineSampler([
    rig.javaPid ?? NaN,
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
    const retriesBefore = rig.orderRetries;
    const roundStart = wallNow();
    /** The round's orders, in the users' order. */
    const placed: string[] = [];
    const placement = await placeOrders(
      users.map((user) => user.userId),
      pace,
      options.arrivals,
      async (userId) => {
        const sentAt = wallNow();
        const orderId = await rig.placeOrder(userId);
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
      `(a) orders at ${name}, ${options.arrivals === 'even' || pace.kind === 'max' ? '' : 'poisson, '}${placementLine(placement)}`,
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
      `    conflicts on the products' items: ${rig.orderRetries - retriesBefore} orders placed again, ${(await metric(consumer, 'tablegraph_stream_record_failures_total')) - failuresBefore} stream records retried`,
    );
    out(`    event loop delay: the bench's client ${clientLoop}; the instances' max ${instanceLoops}`);
    out(`    the instances' CPU time meanwhile (the first also serves the mutations): ${instanceCpu.join(', ')}`);
    const pauses = gcPauses(rig.gcLog);
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
  for (const client of rig.clients.splice(0)) dispose(client);
  await waitUntil(async () => (await rig.activeSubscriptions()) === 0, {
    timeoutMs: 60_000,
    intervalMs: 200,
    what: 'subscriptions closed',
  });
  // An instance with no listener for a topic: only apis[0] listens to the lonely user's orders.
  const lonelyHeard: string[] = [];
  rig.wsSubscriptions(
    apis[0]!,
    rig.lonely.userId,
    1,
    (orderId) => lonelyHeard.push(orderId),
    () => undefined,
  );
  await waitUntil(async () => (await rig.activeSubscriptions()) === 1, {
    timeoutMs: 10_000,
    what: 'the lonely subscription',
  });
  const before = await Promise.all(apis.map((api) => metric(api, DELIVERIES)));
  const lonelyOrder = await rig.placeOrder(rig.lonely.userId);
  await waitUntil(() => lonelyHeard.includes(lonelyOrder), { timeoutMs: 10_000, what: 'the lonely order heard' });
  const after = await Promise.all(apis.map((api) => metric(api, DELIVERIES)));
  out(
    `(a) messages of one order's topics received: the listening instance ${after[0]! - before[0]!}, the idle ones ${after[1]! - before[1]!} and ${after[2]! - before[2]!}`,
  );
  for (const client of rig.clients.splice(0)) dispose(client);
}
