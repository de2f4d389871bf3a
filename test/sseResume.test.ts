/**
 * Resuming an SSE subscription with graphql-sse's own client (client/resumableSse.ts): after a
 * dropped connection, graphql-sse reconnects by itself, and with `resumable()` it sends the last
 * event id it delivered, so the event published while it was away arrives, once, before the live
 * ones. Without it, graphql-sse alone reconnects and misses that event.
 */
import { createClient } from 'graphql-sse';
import type { ClientOptions } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumable } from '../client/resumableSse.js';
import { aProduct, aUser, placedEvents } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

const alice = aUser();
const product = aProduct();
const EVENTS = 'subscription { orderEvents { order { orderId } } }';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ sseReplayEvents: 50 });
  token = await tokenFor('test-admin', 'admin');
});
afterAll(() => server?.stop());

const anEvent = placedEvents(alice, [product], 10n ** 19n, 3n);

const subscribers = (count: number) =>
  expect.poll(() => server.app.events.subscriberCount, { timeout: 5000, interval: 5 }).toBe(count);

/**
 * A fetch whose connection the test can drop (as a network would, mid-stream), recording the
 * Last-Event-ID of every request it sends.
 */
function droppableFetch() {
  const sent: (string | null)[] = [];
  let current: AbortController | undefined;
  const fetchFn = (input: Parameters<typeof fetch>[0], init: RequestInit = {}) => {
    sent.push(new Headers(init.headers).get('last-event-id'));
    const connection = new AbortController();
    current = connection;
    init.signal?.addEventListener('abort', () => connection.abort());
    return fetch(input, { ...init, signal: connection.signal });
  };
  return { fetchFn, sent, drop: () => current?.abort() };
}

/**
 * Subscribes with `options`; receives one event, loses the connection, and while graphql-sse waits
 * to reconnect one event is published; then one more live. Returns the order ids received.
 */
async function dropAndReconnect(options: (fetchFn: ClientOptions['fetchFn']) => ClientOptions) {
  await subscribers(0);
  const network = droppableFetch();
  const [first, away, afterwards] = [anEvent(), anEvent(), anEvent()];
  const client = createClient({
    ...options(network.fetchFn),
    // graphql-sse waits here before it reconnects: the event published meanwhile is missed.
    retry: async () => {
      await subscribers(0);
      await server.app.events.publish(away);
    },
  });
  const received: string[] = [];
  const iterator = client.iterate<{ orderEvents: { order: { orderId: string } } }>({ query: EVENTS });
  const next = async () => (await iterator.next()).value?.data?.orderEvents.order.orderId;
  try {
    const pending = next();
    await subscribers(1);
    await server.app.events.publish(first);
    received.push(await pending);
    network.drop();
    const resumed = next();
    await expect.poll(() => network.sent.length).toBe(2);
    await subscribers(1);
    await server.app.events.publish(afterwards);
    received.push(await resumed);
    if (received.at(-1) !== afterwards.node.orderId) received.push(await next());
  } finally {
    await iterator.return?.();
    client.dispose();
    await subscribers(0);
  }
  return {
    received,
    sent: network.sent,
    expected: [first, away, afterwards].map((event) => event.node.orderId),
    seqs: [first, away, afterwards].map((event) => event.seq),
  };
}

describe("graphql-sse's client", () => {
  const base = (fetchFn: ClientOptions['fetchFn']): ClientOptions => ({
    url: `${server.url}/stream`,
    headers: { authorization: `Bearer ${token}` },
    fetchFn,
  });

  it('with resumable(), reconnects after the event it delivered last and misses nothing', async () => {
    const ids: string[] = [];
    const run = await dropAndReconnect((fetchFn) => resumable(base(fetchFn), { onEventId: (id) => void ids.push(id) }));
    expect(run.sent).toEqual([null, run.seqs[0]]);
    expect(run.received).toEqual(run.expected);
    expect(ids).toEqual(run.seqs);
  });

  it('alone, reconnects without an event id and misses the event published while it was away', async () => {
    const run = await dropAndReconnect(base);
    expect(run.sent).toEqual([null, null]);
    expect(run.received).toEqual([run.expected[0], run.expected[2]]);
  });
});
