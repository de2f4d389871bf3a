/**
 * `npm run bench:fanout-burst`: what one API instance's event loop goes through while it fans a
 * burst of change events out to thousands of subscriptions, with nothing else in the way (no
 * stream reader, no consumer, no mutation): one instance as a child process on one redis-server
 * (its DynamoDB Local table only lets it start), `--sockets` graphql-ws sockets of
 * `--per-socket` subscriptions each (one user per socket, as a user's tabs), then `--bursts`
 * bursts of one event per user published at once on Redis, the way a consumer publishes. Prints
 * per burst the instance's longest event-loop delay (monitorEventLoopDelay, prom-client's
 * `nodejs_eventloop_lag_max_seconds`, read before and after), the time from the burst's publish
 * to its last delivery at the clients, the instance's CPU time for it, and its garbage collection
 * meanwhile (the instance runs with `--trace-gc-nvp`: its scavenges and mark-compacts, their
 * pauses, and the bytes allocated and surviving a scavenge, as V8 counts them). Never part of `npm test`.
 *
 *   npm run bench:fanout-burst -- --sockets 200 --per-socket 17 --bursts 8 [--cpu-prof <dir>]
 */
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import { signToken } from '../src/auth/tokens.js';
import { parseCommandLine } from '../src/cli.js';
import { ChildServers } from '../test/support/childServers.js';
import type { ChildServer } from '../test/support/childServers.js';
import { anOrder, anOrderEvent, aProduct, aUser } from '../test/support/factories.js';
import { metric } from '../test/support/fanOut.js';
import { TEST_AUTH } from '../test/support/harness.js';
import { openEventBus } from '../test/support/redisBus.js';
import { RedisServer } from '../test/support/redisServer.js';
import { waitUntil } from '../test/support/waitUntil.js';
import { startBenchTable } from './benchServer.js';
import { spread } from './eventStages.js';

const { values } = parseCommandLine({
  name: 'bench:fanout-burst',
  run: 'npm run bench:fanout-burst --',
  usage: `[--sockets 200] [--per-socket 17] [--bursts 8]

One API instance fanning bursts of change events out to many subscriptions: its longest
event-loop delay, the burst's delivery time and its CPU time, per burst.

  --sockets <n>     graphql-ws sockets, one user each (default 200)
  --per-socket <n>  subscriptions to the user's order events per socket (default 17)
  --bursts <n>      bursts, each one event per user published at once (default 8)
  --cpu-prof <dir>  the instance runs with node --cpu-prof and writes its CPU profile into <dir>
                    when it is stopped`,
  options: {
    sockets: { type: 'string', default: '200' },
    'per-socket': { type: 'string', default: '17' },
    bursts: { type: 'string', default: '8' },
    'cpu-prof': { type: 'string' },
  },
});
const SOCKETS = Number(values.sockets);
const PER_SOCKET = Number(values['per-socket']);
const BURSTS = Number(values.bursts);
const QUERY = 'subscription { orderEvents { type order { orderId } } }';
const out = (line: string) => console.info(line);

const TRACE_GC = `data:text/javascript,import v8 from 'node:v8'; v8.setFlagsFromString('--trace-gc-nvp');`;
/** A `--trace-gc-nvp` line's figures: `... pause=12.5 mutator=129.7 gc=s ... allocated=5160440 promoted=180680 ...`. */
const nvp = (line: string, name: string): string | undefined => new RegExp(`\\b${name}=(\\S+)`).exec(line)?.[1];

interface GcFigures {
  scavenges: number;
  markCompacts: number;
  /** Sum and longest of the pauses, ms. */
  pauseMs: number;
  longestMs: number;
  /** Bytes allocated, and bytes that survived a scavenge (copied or promoted), as V8 counts them. */
  allocated: number;
  survived: number;
}

/** The collections in `text` (the instance's stdout since a mark). */
function gcFigures(text: string): GcFigures {
  const figures: GcFigures = { scavenges: 0, markCompacts: 0, pauseMs: 0, longestMs: 0, allocated: 0, survived: 0 };
  for (const line of text.split('\n')) {
    const kind = nvp(line, 'gc');
    const pause = Number(nvp(line, 'pause'));
    if (kind === undefined || !Number.isFinite(pause)) continue;
    if (kind === 's' || kind === 'mmc') figures.scavenges++;
    else figures.markCompacts++;
    figures.pauseMs += pause;
    figures.longestMs = Math.max(figures.longestMs, pause);
    figures.allocated += Number(nvp(line, 'allocated') ?? 0);
    if (kind === 's' || kind === 'mmc')
      figures.survived += Number(nvp(line, 'new_space_survived') ?? 0) + Number(nvp(line, 'promoted') ?? 0);
  }
  return figures;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const gcLine = (gc: GcFigures) =>
  `${gc.scavenges} scavenge(s), ${gc.markCompacts} mark-compact(s), pauses ${gc.pauseMs.toFixed(0)} ms (longest ${gc.longestMs.toFixed(0)} ms), allocated ${mb(gc.allocated)}, survived a scavenge ${mb(gc.survived)}`;

const table = await startBenchTable('BenchFanOutBurst');
const redis = await RedisServer.start();
const children = new ChildServers();
const clients: Client[] = [];
/** The instance, stopped with SIGTERM at the end so that its CPU profile is written. */
let instance: ChildServer | undefined;
try {
  const api = await children.start(table.endpoint, table.tableName, {
    ...redis.env,
    STREAM_CONSUMER: 'false',
    WS_MAX_SOCKETS: '20000',
    WS_MAX_OPERATIONS_PER_SOCKET: String(PER_SOCKET),
    CLIENT_MAX_CONNECTIONS: '20000',
    CLIENT_MAX_SUBSCRIPTIONS: '20000',
    WS_CONNECTION_INIT_TIMEOUT_MS: '30000',
    // `--trace-gc-nvp` is not allowed in NODE_OPTIONS: set by a module imported first.
    NODE_OPTIONS: [
      `--import "${TRACE_GC}"`,
      ...(values['cpu-prof'] ? [`--cpu-prof --cpu-prof-dir=${values['cpu-prof']}`] : []),
    ].join(' '),
  });
  instance = api;
  const users = Array.from({ length: SOCKETS }, () => aUser());
  const product = aProduct();
  let received = 0;
  for (const user of users) {
    const client = createClient({
      url: api.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: {
        authorization: `Bearer ${await signToken({ userId: user.userId, role: 'customer' }, TEST_AUTH)}`,
      },
      retryAttempts: 0,
    });
    clients.push(client);
    for (let i = 0; i < PER_SOCKET; i++) {
      client.subscribe(
        { query: QUERY },
        { next: () => void received++, error: () => undefined, complete: () => undefined },
      );
    }
  }
  const subscriptions = SOCKETS * PER_SOCKET;
  await waitUntil(async () => (await metric(api, 'graphql_subscriptions_active')) >= subscriptions, {
    timeoutMs: 120_000,
    intervalMs: 500,
    what: `${subscriptions} subscriptions open`,
  });
  await waitUntil(async () => (await metric(api, 'tablegraph_event_bus_topics')) >= SOCKETS, {
    timeoutMs: 30_000,
    intervalMs: 200,
    what: `${SOCKETS} topics subscribed`,
  });
  out(`${subscriptions} subscriptions on one instance (${SOCKETS} sockets of ${PER_SOCKET}, one user each)`);

  const publisher = await openEventBus(redis.settings, table.tableName);
  let seq = 10n ** 20n;
  const stalls: number[] = [];
  const durations: number[] = [];
  const cpus: number[] = [];
  const gcs: GcFigures[] = [];
  try {
    for (let burst = 1; burst <= BURSTS; burst++) {
      const events = users.map((user) => anOrderEvent(anOrder(user, [product]), (seq += 7n).toString()));
      // Read first: the read resets the instance's event-loop figures.
      await metric(api, 'nodejs_eventloop_lag_max_seconds');
      const cpuBefore = await metric(api, 'process_cpu_seconds_total');
      const gcMark = api.node.stdout().length;
      const expected = received + subscriptions;
      const start = performance.now();
      await Promise.all(events.map((event) => publisher.publish(event)));
      await waitUntil(() => received >= expected, { timeoutMs: 60_000, intervalMs: 5, what: 'the burst delivered' });
      const tookMs = performance.now() - start;
      const stallMs = (await metric(api, 'nodejs_eventloop_lag_max_seconds')) * 1000;
      const cpuMs = ((await metric(api, 'process_cpu_seconds_total')) - cpuBefore) * 1000;
      const gc = gcFigures(api.node.stdout().slice(gcMark));
      gcs.push(gc);
      stalls.push(stallMs);
      durations.push(tookMs);
      cpus.push(cpuMs);
      out(
        `burst ${burst}: ${events.length} events to ${subscriptions} subscriptions; the instance's longest event-loop delay ${stallMs.toFixed(0)} ms, delivered in ${tookMs.toFixed(0)} ms, CPU ${cpuMs.toFixed(0)} ms; GC: ${gcLine(gc)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await publisher.close();
  }
  out(`longest event-loop delay per burst: ${spread(stalls)}; delivery per burst: ${spread(durations)}`);
  const sum = (pick: (gc: GcFigures) => number) => gcs.reduce((total, gc) => total + pick(gc), 0);
  out(
    `over the bursts: CPU ${spread(cpus)}; GC ${gcLine({ scavenges: sum((gc) => gc.scavenges), markCompacts: sum((gc) => gc.markCompacts), pauseMs: sum((gc) => gc.pauseMs), longestMs: Math.max(0, ...gcs.map((gc) => gc.longestMs)), allocated: sum((gc) => gc.allocated), survived: sum((gc) => gc.survived) })}`,
  );
} finally {
  for (const client of clients) void Promise.resolve(client.dispose()).catch(() => undefined);
  // SIGTERM, so that a profiled instance writes its profile.
  if (instance && values['cpu-prof']) await children.stop(instance);
  await children.killAll();
  await redis.dispose();
  await table.stop();
}
process.exit(0);
