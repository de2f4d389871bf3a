/**
 * GraphQL over Server-Sent Events at /graphql/stream: graphql-sse's own client receives a real
 * order's event, numbered with its stream sequence; a stream resumed with Last-Event-ID gets
 * the events it missed, or EVENTS_MISSED when the buffer no longer reaches back; and a bounded
 * soak of forced reconnects loses nothing.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aProduct, aUser, placedEvents, store } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { SseStream } from './support/sseStream.js';

const alice = aUser();
const product = aProduct({ stock: 1000 });
const REPLAY = 50;
/** Forced reconnects of the soak; each misses one event while it is away. */
const RECONNECTS = 1000;

let live: TestServer;
let server: TestServer;
let adminToken: string;
beforeAll(async () => {
  [live, server] = await Promise.all([
    startTestServer({ streams: true }),
    startTestServer({ sseReplayEvents: REPLAY }),
  ]);
  await store(live.dynamo.doc, live.tableName, { users: [alice], products: [product] });
  adminToken = await tokenFor('test-admin', 'admin');
});
afterAll(async () => {
  await Promise.all([live?.stop(), server?.stop()]);
});

const EVENTS = 'subscription { orderEvents { type order { orderId } } }';

const anEvent = placedEvents(alice, [product], 10n ** 20n);

/** Resolves once the server has `count` subscribers (a stream is registered, or gone). */
const subscribers = (target: TestServer, count: number) =>
  expect.poll(() => target.app.events.subscriberCount, { timeout: 5000, interval: 5 }).toBe(count);

describe('GraphQL over SSE', () => {
  it("delivers a placed order's event to graphql-sse's client, numbered with its stream sequence", async () => {
    const client = createClient({
      url: `${live.url}/stream`,
      headers: { authorization: `Bearer ${adminToken}` },
      retryAttempts: 0,
    });
    const raw = await SseStream.open(live.url, adminToken);
    try {
      await live.app.consumer?.waitUntilCaughtUp(10_000);
      const iterator = client.iterate<{ orderEvents: { type: string; order: { orderId: string } } }>({ query: EVENTS });
      const first = iterator.next();
      await subscribers(live, 2);
      const placed = await live.gql(
        `mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { order { orderId } } }`,
        {
          input: {
            userId: alice.userId,
            items: [{ productId: product.productId, quantity: 1 }],
            idempotencyKey: 'sse-1',
          },
        },
        { authorization: `Bearer ${await tokenFor(alice.userId)}` },
      );
      const orderId = placed.data?.placeOrder.order.orderId as string;
      expect((await first).value?.data?.orderEvents).toEqual({ type: 'ORDER_PLACED', order: { orderId } });
      await iterator.return?.();
      const event = await raw.next();
      expect(event.event).toBe('next');
      expect(event.id).toMatch(/^\d{1,40}$/);
      expect(JSON.parse(event.data).data.orderEvents.order.orderId).toBe(orderId);
    } finally {
      raw.close();
      client.dispose();
    }
  }, 30_000);

  it('refuses a Last-Event-ID that is not an event id, and a stream without a token for user data', async () => {
    const bad = await SseStream.open(server.url, adminToken, 'nope');
    expect(bad.status).toBe(400);
    const anonymous = await fetch(`${server.url}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: EVENTS }),
    });
    expect(await anonymous.json()).toMatchObject({
      errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
    });
  });

  it('signals EVENTS_MISSED when the buffer no longer reaches back to Last-Event-ID, then goes on live', async () => {
    const stream = await SseStream.open(server.url, adminToken);
    await subscribers(server, 1);
    const seen = anEvent();
    await server.app.events.publish(seen);
    expect((await stream.next()).id).toBe(seen.seq);
    stream.close();
    await subscribers(server, 0);
    for (let i = 0; i <= REPLAY; i++) await server.app.events.publish(anEvent());

    const resumed = await SseStream.open(server.url, adminToken, seen.seq);
    const signal = await resumed.next();
    expect(JSON.parse(signal.data).errors[0].extensions.code).toBe('EVENTS_MISSED');
    await subscribers(server, 1);
    const next = anEvent();
    await server.app.events.publish(next);
    expect((await resumed.next()).id).toBe(next.seq);
    resumed.close();
    await subscribers(server, 0);
  });

  it(`loses no event over ${RECONNECTS} forced reconnects within the buffer's window`, async () => {
    let lastId: string | undefined;
    const counts = { published: 0, received: 0, duplicates: 0, lost: 0, missedSignals: 0 };
    const received = new Set<string>();
    const expected: string[] = [];
    for (let cycle = 0; cycle < RECONNECTS; cycle++) {
      const stream = await SseStream.open(server.url, adminToken, lastId);
      // The event missed while away (none in the first cycle), then one sent live.
      const want = expected.splice(0);
      await subscribers(server, 1);
      const liveEvent = anEvent();
      await server.app.events.publish(liveEvent);
      counts.published++;
      want.push(liveEvent.seq);
      for (const id of want) {
        const event = await stream.next();
        const code = event.id === undefined ? JSON.parse(event.data).errors?.[0]?.extensions?.code : undefined;
        if (code === 'EVENTS_MISSED') counts.missedSignals++;
        if (event.id === undefined) continue;
        if (received.has(event.id)) counts.duplicates++;
        received.add(event.id);
        if (event.id !== id) counts.lost++;
        lastId = event.id;
      }
      stream.close();
      await subscribers(server, 0);
      const away = anEvent();
      await server.app.events.publish(away);
      counts.published++;
      expected.push(away.seq);
    }
    counts.received = received.size;
    // The last cycle's missed event is not fetched again: it is the one left in `expected`.
    counts.lost += counts.published - expected.length - counts.received;
    console.log(`SSE soak: ${JSON.stringify({ reconnects: RECONNECTS, ...counts })}`);
    expect(counts).toEqual({
      published: 2 * RECONNECTS,
      received: 2 * RECONNECTS - 1,
      duplicates: 0,
      lost: 0,
      missedSignals: 0,
    });
  }, 240_000);
});
