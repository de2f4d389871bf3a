/**
 * Subscriptions over graphql-ws, fed by the table's stream: events reach subscribers whoever
 * wrote the change (another server instance, a direct SDK write), under the same authorization
 * rules as queries.
 */
import { createClient } from 'graphql-ws';
import type { Client, ExecutionResult } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { aProduct, aUser, anOrder, store } from './support/factories.js';
import { signToken } from '../src/auth/tokens.js';
import { startTestServer, TEST_AUTH, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

let server: TestServer;
/** A second instance on the same table, without a stream consumer of its own. */
let other: TestServer;
const alice = aUser();
const bob = aUser();
const product = aProduct({ stock: 1000 });
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer({ streams: true });
  other = await startTestServer({ tableName: server.tableName });
  await store(server.dynamo.doc, server.tableName, { users: [alice, bob], products: [product] });
});
afterAll(async () => {
  for (const client of clients) void client.dispose();
  await other.stop();
  await server.stop();
});

async function connect(token: string | undefined) {
  const client = createClient({
    url: server.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
  clients.push(client);
  return client;
}

/** Subscribes and resolves once the server has registered the subscription. */
async function subscribe(client: Client, query: string) {
  // Earlier changes still travelling through the stream would otherwise arrive first.
  await server.app.consumer?.waitUntilCaughtUp(10_000);
  const before = server.app.events.subscriberCount;
  const iterator = client.iterate<Record<string, any>>({ query });
  const first = iterator.next();
  await expect.poll(() => server.app.events.subscriberCount, { timeout: 5000 }).toBeGreaterThan(before);
  return { iterator, first };
}

const EVENTS = 'subscription { orderEvents { type previousStatus at order { orderId status user { userId } } } }';
const placeOrder = (userId: string, key: string, via: TestServer) =>
  via.gql(
    `mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { order { orderId } userErrors { code } } }`,
    {
      input: { userId, idempotencyKey: key, items: [{ productId: product.productId, quantity: 1 }] },
    },
  );

describe('order events', () => {
  it('reach the subscriber for an order placed through another server instance', async () => {
    const client = await connect(await tokenFor(alice.userId));
    const { iterator, first } = await subscribe(client, EVENTS);
    const placed = await placeOrder(alice.userId, 'via-other-instance', other);
    const orderId = placed.data?.placeOrder.order.orderId as string;
    const { value } = (await first) as { value: ExecutionResult<Record<string, any>> };
    expect(value.errors).toBeUndefined();
    expect(value.data?.orderEvents).toMatchObject({
      type: 'ORDER_PLACED',
      previousStatus: null,
      order: { orderId, status: 'PLACED', user: { userId: alice.userId } },
    });
    await iterator.return?.();
  });

  it('reach the subscriber for an order written directly with the SDK, not through any server', async () => {
    const client = await connect(await tokenFor(alice.userId));
    const { iterator, first } = await subscribe(client, EVENTS);
    const order = anOrder(alice, [product], { placedAt: new Date().toISOString() });
    await store(server.dynamo.doc, server.tableName, { orders: [order] });
    const { value } = (await first) as { value: ExecutionResult<Record<string, any>> };
    expect(value.data?.orderEvents.order.orderId).toBe(order.orderId);
    await iterator.return?.();
  });

  it("follow one order's status changes", async () => {
    const placed = await placeOrder(alice.userId, 'watched-order', server);
    const orderId = placed.data?.placeOrder.order.orderId as string;
    const client = await connect(await tokenFor(alice.userId));
    const { iterator, first } = await subscribe(
      client,
      `subscription { orderUpdated(orderId: "${orderId}") { type previousStatus order { orderId status } } }`,
    );
    await server.gql(
      'mutation($id: ID!) { updateOrderStatus(input: { orderId: $id, status: SHIPPED }) { order { status } } }',
      {
        id: orderId,
      },
    );
    const { value } = (await first) as { value: ExecutionResult<Record<string, any>> };
    expect(value.data?.orderUpdated).toEqual({
      type: 'ORDER_STATUS_CHANGED',
      previousStatus: 'PLACED',
      order: { orderId, status: 'SHIPPED' },
    });
    await iterator.return?.();
  });

  it("do not deliver another customer's orders", async () => {
    const client = await connect(await tokenFor(alice.userId));
    const { iterator, first } = await subscribe(client, EVENTS);
    await placeOrder(bob.userId, 'bobs-order', server);
    const mine = await placeOrder(alice.userId, 'after-bobs', server);
    const { value } = (await first) as { value: ExecutionResult<Record<string, any>> };
    // The first event alice sees is her own later order: bob's was filtered out.
    expect(value.data?.orderEvents.order.orderId).toBe(mine.data?.placeOrder.order.orderId);
    await iterator.return?.();
  });

  it('let an admin watch every order', async () => {
    const client = await connect(await tokenFor('ops', 'admin'));
    const { iterator, first } = await subscribe(client, EVENTS);
    const placed = await placeOrder(bob.userId, 'watched-by-admin', server);
    const { value } = (await first) as { value: ExecutionResult<Record<string, any>> };
    expect(value.data?.orderEvents.order.orderId).toBe(placed.data?.placeOrder.order.orderId);
    await iterator.return?.();
  });
});

describe("one viewer's identical subscriptions", () => {
  it('get one answer per event, each viewer its own (an admin sees capacity units, a customer not)', async () => {
    // The same document and variables for both viewers: only the viewer tells them apart.
    const query = `subscription { orderEvents(userId: "${alice.userId}") { type order { orderId status user { userId } } } }`;
    const aliceToken = await tokenFor(alice.userId);
    const subscriptions = [];
    for (const token of [aliceToken, aliceToken, await tokenFor('ops', 'admin')]) {
      subscriptions.push(await subscribe(await connect(token), query));
    }
    const placed = await placeOrder(alice.userId, 'shared-execution', other);
    const orderId = placed.data?.placeOrder.order.orderId as string;
    const [first, second, admin] = (await Promise.all(subscriptions.map(({ first }) => first))).map(
      ({ value }) => value as ExecutionResult<Record<string, any>, Record<string, any>>,
    );
    const data = {
      orderEvents: { type: 'ORDER_PLACED', order: { orderId, status: 'PLACED', user: { userId: alice.userId } } },
    };
    expect(first?.data).toEqual(data);
    expect(second).toEqual(first);
    expect(admin?.data).toEqual(data);
    expect(Object.keys(first?.extensions?.cost.dynamodb ?? {})).toEqual(['requests']);
    expect(admin?.extensions?.cost.dynamodb).toHaveProperty('readCapacityUnits');
    for (const { iterator } of subscriptions) await iterator.return?.();
  });
});

describe('subscription authorization', () => {
  const firstResult = async (token: string | undefined, query: string) => {
    const client = await connect(token);
    const iterator = client.iterate({ query });
    try {
      return await iterator.next();
    } catch (error) {
      return { error };
    }
  };

  it("refuses a customer watching another user's orders", async () => {
    const result = await firstResult(
      await tokenFor(alice.userId),
      `subscription { orderEvents(userId: "${bob.userId}") { type } }`,
    );
    expect(JSON.stringify(result)).toContain('FORBIDDEN');
  });

  it("treats another customer's order like a missing one", async () => {
    const placed = await placeOrder(bob.userId, 'bobs-secret-order', server);
    const theirs = await firstResult(
      await tokenFor(alice.userId),
      `subscription { orderUpdated(orderId: "${placed.data?.placeOrder.order.orderId}") { type } }`,
    );
    const missing = await firstResult(
      await tokenFor(alice.userId),
      'subscription { orderUpdated(orderId: "no-such-order") { type } }',
    );
    expect(JSON.stringify(theirs).replace(/orderId \\"[^"\\]+\\"/, 'ID')).toBe(
      JSON.stringify(missing).replace(/orderId \\"[^"\\]+\\"/, 'ID'),
    );
    expect(JSON.stringify(theirs)).toContain('BAD_USER_INPUT');
  });

  it('refuses to subscribe without a token', async () => {
    const result = await firstResult(undefined, EVENTS);
    expect(JSON.stringify(result)).toContain('UNAUTHENTICATED');
  });

  it.each([
    ['a forged token', async () => 'not.a.token', 'Unauthorized: The token is not a valid JWT'],
    [
      'an expired token',
      async () => signToken({ userId: alice.userId, role: 'customer' }, TEST_AUTH, -60),
      'Unauthorized: The token has expired',
    ],
  ])(
    'closes the connection for %s with 4401 and the reason, and the client does not retry',
    async (_name, token, reason) => {
      const closes: { code: number; reason: string }[] = [];
      const client = createClient({
        url: server.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${await token()}` },
        // Defaults otherwise: graphql-ws retries 5 times, except after a close it knows is final.
        on: { closed: (event) => closes.push(event as { code: number; reason: string }) },
      });
      clients.push(client);
      const outcome = await client
        .iterate({ query: EVENTS })
        .next()
        .then(
          () => 'result',
          (error: { code: number; reason: string }) => error,
        );
      expect(outcome).toMatchObject({ code: 4401, reason });
      expect(closes).toHaveLength(1);
    },
  );

  const viewerOver = async (connectionParams: Record<string, unknown>) => {
    const client = createClient({
      url: server.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams,
      retryAttempts: 0,
    });
    clients.push(client);
    return client
      .iterate<{ viewer: { userId: string } | null }>({ query: '{ viewer { userId } }' })
      .next()
      .then(
        ({ value }) => value,
        (error: { code: number; reason: string }) => ({ code: error.code, reason: error.reason }),
      );
  };

  it('authenticates a token under connectionParams.headers.Authorization, as HTTP headers are reused', async () => {
    const outcome = await viewerOver({ headers: { Authorization: `Bearer ${await tokenFor(alice.userId)}` } });
    expect(outcome).toMatchObject({ data: { viewer: { userId: alice.userId } } });
  });

  it('refuses a connectionParams.headers.Authorization that is not a bearer token with 4401 and the reason', async () => {
    const outcome = await viewerOver({ headers: { Authorization: { token: 'x' } } });
    expect(outcome).toEqual({ code: 4401, reason: 'Unauthorized: The Authorization header must be "Bearer <token>"' });
  });
});
