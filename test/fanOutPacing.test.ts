/**
 * A burst of events to more subscriptions than one turn of the event loop serves: the fan-out
 * spreads the work over turns (src/events/turnPacer.ts), and each subscription still receives
 * every event of its topic once, in the order published, and nothing of another topic. Over
 * each transport that carries subscriptions.
 */
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_WEBSOCKET_LIMITS } from '../src/config/index.js';
import { DEFAULT_SHARE } from '../src/events/turnPacer.js';
import { anOrder, anOrderEvent, aProduct, aUser } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { SseStream } from './support/sseStream.js';

const QUERY = 'subscription { orderEvents { type order { orderId } } }';
const users = [aUser(), aUser()];
const product = aProduct();
/** Per user: together more than a turn ever admits, so the burst must wait for later turns. */
const PER_USER = Math.ceil(DEFAULT_SHARE / 2) + 10;
const EVENTS_PER_USER = 8;

let server: TestServer;
const clients: Client[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  server = await startTestServer({
    websocket: {
      ...DEFAULT_WEBSOCKET_LIMITS,
      maxOperationsPerSocket: PER_USER,
      maxConnectionsPerClient: PER_USER,
      maxSubscriptionsPerClient: PER_USER,
    },
  });
});
afterAll(async () => {
  for (const client of clients) void client.dispose();
  for (const stream of streams) stream.close();
  await server.stop();
});

/** What one subscription received: the order ids in arrival order. */
type Received = string[];

/** `PER_USER` subscriptions of `userId` over one graphql-ws socket. */
async function overWebSocket(userId: string): Promise<{ received: Received[]; done: () => Promise<void> }> {
  const client = createClient({
    url: server.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${await tokenFor(userId)}` },
    retryAttempts: 0,
  });
  clients.push(client);
  const received = Array.from({ length: PER_USER }, () => [] as Received);
  for (const list of received) {
    client.subscribe<{ orderEvents: { order: { orderId: string } } }>(
      { query: QUERY },
      {
        next: (result) => list.push(result.data?.orderEvents.order.orderId ?? `error ${JSON.stringify(result)}`),
        error: (error) => list.push(`error ${JSON.stringify(error)}`),
        complete: () => undefined,
      },
    );
  }
  return { received, done: () => Promise.resolve(client.dispose()) };
}

/** `PER_USER` SSE streams of `userId`, read as they come; the event ids are kept too. */
async function overSse(userId: string): Promise<{ received: Received[]; done: () => Promise<void> }> {
  const token = await tokenFor(userId);
  const opened = await Promise.all(Array.from({ length: PER_USER }, () => SseStream.open(server.url, token)));
  streams.push(...opened);
  const received = opened.map(() => [] as Received);
  let open = true;
  const readers = opened.map(async (stream, i) => {
    while (open) {
      const event = await stream.next();
      if (event.event !== 'next') continue;
      const payload = JSON.parse(event.data) as { data?: { orderEvents: { order: { orderId: string } } } };
      received[i]!.push(`${event.id} ${payload.data?.orderEvents.order.orderId ?? event.data}`);
    }
  });
  return {
    received,
    done: async () => {
      open = false;
      for (const stream of opened) stream.close();
      void Promise.allSettled(readers);
    },
  };
}

describe.each([
  ['WebSocket', overWebSocket, (seq: string, orderId: string) => orderId],
  ['SSE', overSse, (seq: string, orderId: string) => `${seq} ${orderId}`],
] as const)('a burst over %s', (_transport, open, expectedOf) => {
  it('reaches every subscription of each topic once and in order, spread over turns', async () => {
    const before = server.app.events.subscriberCount;
    const opened = await Promise.all(users.map((user) => open(user.userId)));
    await expect
      .poll(() => server.app.events.subscriberCount, { timeout: 10_000 })
      .toBe(before + users.length * PER_USER);

    // The users' events interleaved, published in one go: one turn hears all of them.
    let seq = 10n ** 20n + BigInt(Math.floor(Math.random() * 1e9)) * 1000n;
    const expected = users.map(() => [] as string[]);
    const events = [];
    for (let i = 0; i < EVENTS_PER_USER; i++) {
      for (const [u, user] of users.entries()) {
        seq += 3n;
        const event = anOrderEvent(anOrder(user, [product]), seq.toString());
        expected[u]!.push(expectedOf(event.seq, event.node.orderId));
        events.push(event);
      }
    }
    const deferredBefore = server.app.events.pacer.deferred;
    for (const event of events) void server.app.events.publish(event);

    const total = users.length * PER_USER * EVENTS_PER_USER;
    const count = () => opened.flatMap(({ received }) => received).reduce((n, list) => n + list.length, 0);
    await expect.poll(count, { timeout: 20_000 }).toBe(total);
    // Part of the burst waited for a later turn of the event loop.
    expect(server.app.events.pacer.deferred).toBeGreaterThan(deferredBefore);
    for (const [u, { received }] of opened.entries()) {
      for (const list of received) expect(list).toEqual(expected[u]);
    }
    await Promise.all(opened.map(({ done }) => done()));
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 10_000 }).toBe(before);
  });
});
