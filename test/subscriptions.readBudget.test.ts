/**
 * Subscribing costs a bounded amount of reading: the reads made while subscriptions open (an
 * `orderUpdated` reads its order) take from a per-viewer and a per-instance budget, and once one
 * is spent the opening is refused with RATE_LIMITED before anything is sent to DynamoDB. One
 * policy (src/pipeline/execution/subscribeReads.ts), run here over each transport that carries
 * subscriptions.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import { aProduct, aUser, ordersOf, store } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { RawSocket } from './support/transports.js';
import { waitUntil } from './support/waitUntil.js';

const TRANSPORTS = ['WebSocket', 'SSE'] as const;
type Transport = (typeof TRANSPORTS)[number];

const PER_VIEWER = 3;
const PER_INSTANCE = 5;
const product = aProduct();
const [alice, bob, carol] = [aUser(), aUser(), aUser()];
const ordersOfAlice = ordersOf(alice, [product], PER_VIEWER + 1);
const ordersOfBob = ordersOf(bob, [product], PER_VIEWER);
const ordersOfCarol = ordersOf(carol, [product], 1);

/** Counts the reads of order items the server sends to DynamoDB (nothing else it reads). */
function countOrderReads(client: DynamoDBClient, reads: { count: number }) {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const read = ['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand'].includes(context.commandName ?? '');
      if (read && JSON.stringify(args.input).includes('ORDER#')) reads.count += 1;
      return next(args);
    },
    { step: 'initialize', name: 'testCountOrderReads' },
  );
}

let server: TestServer | undefined;
const reads = { count: 0 };
const closers: (() => void)[] = [];

async function start() {
  reads.count = 0;
  server = await startTestServer({
    limits: {
      ...DEFAULT_LIMITS,
      subscribeReadsPerViewer: PER_VIEWER,
      subscribeReadsPerInstance: PER_INSTANCE,
      // A window this long refills nothing while the test runs.
      subscribeReadWindowMs: 3_600_000,
    },
    configureClient: (client) => countOrderReads(client, reads),
  });
  await store(server.dynamo.doc, server.tableName, {
    users: [alice, bob, carol],
    products: [product],
    orders: [...ordersOfAlice, ...ordersOfBob, ...ordersOfCarol],
  });
  return server;
}
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await server?.stop();
  server = undefined;
});

type Opened = { open: true } | { open: false; errors: { message: string; extensions?: Record<string, unknown> }[] };

/** Opens one subscription and says whether it is open (the server registered it) or was refused. */
async function subscribe(transport: Transport, target: TestServer, token: string, query: string): Promise<Opened> {
  const before = target.app.events.subscriberCount;
  if (transport === 'SSE') {
    const abort = new AbortController();
    const response = await fetch(`${target.url}/stream`, {
      method: 'POST',
      signal: abort.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query }),
    });
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      return { open: false, errors: ((await response.json()) as { errors: [] }).errors };
    }
    // The closer holds the response: fetch cancels the body of a Response that is garbage
    // collected unread, which would close the stream and end the subscription mid-test.
    closers.push(() => {
      abort.abort();
      void response.body?.cancel().catch(() => undefined);
    });
  } else {
    const socket = await RawSocket.open(target.url, token);
    closers.push(() => socket.close());
    expect(await socket.next()).toMatchObject({ type: 'connection_ack' });
    socket.subscribe('1', { query });
    // Open: registered with the server's events, and no message (an open subscription is silent).
    const answer = await waitUntil(
      () =>
        target.app.events.subscriberCount > before
          ? 'open'
          : socket.received
              .map((text) => JSON.parse(text) as { id?: string; payload?: unknown })
              .find((m) => m.id === '1'),
      { timeoutMs: 10_000, intervalMs: 5, what: 'the subscription to open or be refused' },
    );
    if (answer !== 'open') {
      const payload = answer.payload as { errors?: [] } | [];
      return { open: false, errors: Array.isArray(payload) ? payload : (payload.errors ?? []) };
    }
    return { open: true };
  }
  await expect.poll(() => target.app.events.subscriberCount, { timeout: 10_000 }).toBeGreaterThan(before);
  return { open: true };
}

const watchOrder = (orderId: string) => `subscription { orderUpdated(orderId: "${orderId}") { type } }`;
const WATCH_MY_ORDERS = 'subscription { orderEvents { type } }';

describe.each(TRANSPORTS)('subscribing over %s', (transport) => {
  it("opens a viewer's subscriptions until their reads reach the viewer's budget, then refuses with RATE_LIMITED and reads nothing", async () => {
    const target = await start();
    const token = await tokenFor(alice.userId);
    const firstRead = Date.now();
    for (const order of ordersOfAlice.slice(0, PER_VIEWER)) {
      expect(await subscribe(transport, target, token, watchOrder(order.orderId))).toEqual({ open: true });
    }
    expect(reads.count).toBe(PER_VIEWER);

    const refused = await subscribe(transport, target, token, watchOrder(ordersOfAlice[PER_VIEWER]!.orderId));
    expect(refused).toMatchObject({
      open: false,
      errors: [
        {
          message: expect.stringMatching(/^Too many subscriptions opened: at most 3 reads per 3600 s for one viewer/),
          extensions: { code: 'RATE_LIMITED', limit: 'SUBSCRIBE_READS_PER_VIEWER' },
        },
      ],
    });
    // The next token comes 1200 s (3600 s / 3) after the first was taken, less the time gone by.
    const retryAfter = refused.open ? undefined : Number(refused.errors[0]?.extensions?.retryAfterSeconds);
    expect(retryAfter).toBeLessThanOrEqual(1200);
    expect(retryAfter).toBeGreaterThanOrEqual(1200 - Math.ceil((Date.now() - firstRead) / 1000));
    expect(reads.count).toBe(PER_VIEWER);
    // A subscription that opens without a read takes nothing from the budget.
    expect(await subscribe(transport, target, token, WATCH_MY_ORDERS)).toEqual({ open: true });
  });

  it("refuses every viewer once the instance's budget is spent, and other viewers are not held to one viewer's budget", async () => {
    const target = await start();
    const aliceToken = await tokenFor(alice.userId);
    const bobToken = await tokenFor(bob.userId);
    for (const order of ordersOfAlice.slice(0, PER_VIEWER)) {
      expect(await subscribe(transport, target, aliceToken, watchOrder(order.orderId))).toEqual({ open: true });
    }
    for (const order of ordersOfBob.slice(0, PER_INSTANCE - PER_VIEWER)) {
      expect(await subscribe(transport, target, bobToken, watchOrder(order.orderId))).toEqual({ open: true });
    }
    expect(reads.count).toBe(PER_INSTANCE);

    for (const [token, orderId] of [
      [bobToken, ordersOfBob[PER_INSTANCE - PER_VIEWER]!.orderId],
      [await tokenFor(carol.userId), ordersOfCarol[0]!.orderId],
    ] as const) {
      expect(await subscribe(transport, target, token, watchOrder(orderId))).toMatchObject({
        open: false,
        errors: [{ extensions: { code: 'RATE_LIMITED', limit: 'SUBSCRIBE_READS_PER_INSTANCE' } }],
      });
    }
    expect(reads.count).toBe(PER_INSTANCE);
  });
});
