/**
 * A subscription's life on the WebSocket: every event reads fresh data, a completed or
 * disconnected subscription is released at once, the token's `exp` ends it, and a socket's
 * resources are bounded (operations per socket, idle time, sockets per server, pings).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signToken } from '../src/auth/tokens.js';
import { DEFAULT_WEBSOCKET_LIMITS, loadServerConfig } from '../src/config/index.js';
import { aProduct, aUser, store } from './support/factories.js';
import { endpoint, startTestServer, TEST_AUTH, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { RawSocket } from './support/transports.js';

let server: TestServer;
/** Tight socket limits, so that each bound can be reached in a test. */
let bounded: TestServer;
const alice = aUser();
const product = aProduct({ stock: 500 });
const clients: Client[] = [];

beforeAll(async () => {
  [server, bounded] = await Promise.all([
    startTestServer({ streams: true }),
    startTestServer({
      websocket: {
        ...DEFAULT_WEBSOCKET_LIMITS,
        maxOperationsPerSocket: 2,
        maxSockets: 4,
        idleTimeoutMs: 300,
        keepAliveMs: 100,
      },
    }),
  ]);
  await store(server.dynamo.doc, server.tableName, { users: [alice], products: [product] });
});
afterAll(async () => {
  for (const client of clients) void client.dispose();
  await Promise.all([server.stop(), bounded.stop()]);
});

function connect(token: string) {
  const client = createClient({
    url: server.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  clients.push(client);
  return client;
}

const placeOrder = (key: string) =>
  server.gql(
    'mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { order { orderId } userErrors { code } } }',
    { input: { userId: alice.userId, idempotencyKey: key, items: [{ productId: product.productId, quantity: 1 }] } },
  );

const WITH_STOCK = 'subscription { orderEvents { order { orderId items { product { stock } } } } }';

/** Subscribes and resolves once the server holds the subscription. */
async function subscribe(client: Client, query: string) {
  await server.app.consumer?.waitUntilCaughtUp(10_000);
  const before = server.app.events.subscriberCount;
  const iterator = client.iterate<Record<string, any>>({ query });
  const first = iterator.next();
  await expect.poll(() => server.app.events.subscriberCount, { timeout: 5000 }).toBe(before + 1);
  return { iterator, first, before };
}

describe('every event', () => {
  it('reads the data as it is then: the second event shows the stock after the second order', async () => {
    const { iterator, first } = await subscribe(connect(await tokenFor(alice.userId)), WITH_STOCK);
    await placeOrder('fresh-1');
    const one = (await first).value as {
      data: { orderEvents: { order: { items: { product: { stock: number } }[] } } };
    };
    const second = iterator.next();
    await placeOrder('fresh-2');
    const two = (await second).value as typeof one;
    expect(one.data.orderEvents.order.items[0]?.product.stock).toBe(499);
    expect(two.data.orderEvents.order.items[0]?.product.stock).toBe(498);
    await iterator.return?.();
  });

  it('carries its own DynamoDB cost', async () => {
    const { iterator, first } = await subscribe(connect(await tokenFor(alice.userId)), WITH_STOCK);
    await placeOrder('costed');
    const { value } = (await first) as { value: { extensions: { cost: { dynamodb: { requests: number } } } } };
    // The product read of this event (one GetItem), not the subscription's history.
    expect(value.extensions.cost.dynamodb.requests).toBe(1);
    await iterator.return?.();
  });
});

describe('a subscription is released at once', () => {
  it('when the client completes it, with no event having arrived', async () => {
    const { iterator, before } = await subscribe(connect(await tokenFor(alice.userId)), WITH_STOCK);
    await iterator.return?.();
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 2000 }).toBe(before);
  });

  it('when the socket closes', async () => {
    const client = connect(await tokenFor(alice.userId));
    const { before } = await subscribe(client, WITH_STOCK);
    await client.dispose();
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 2000 }).toBe(before);
  });

  it(
    'and thousands of subscribe/complete cycles leave the heap flat (child process)',
    { timeout: 60_000 },
    async () => {
      const script = path.join(import.meta.dirname, 'support', 'subscriptionCycles.ts');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', script, '--cycles', '2000'],
        { env: { ...process.env, DYNAMODB_ENDPOINT: endpoint() }, timeout: 55_000 },
      );
      const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
        cycles: number;
        heapBeforeMB: number;
        heapAfterMB: number;
        subscribersLeft: number;
      };
      console.log(
        `subscribe/complete x${result.cycles}: heap ${result.heapBeforeMB} MB -> ${result.heapAfterMB} MB, ${result.subscribersLeft} subscribers left`,
      );
      expect(result.subscribersLeft).toBe(0);
      expect(result.heapAfterMB - result.heapBeforeMB).toBeLessThan(5);
    },
  );
});

describe("the token's exp", () => {
  it('ends the subscription: the socket closes with 4401 and no later event arrives', async () => {
    // Long enough for an order's event to arrive before it on a busy machine (placing it and
    // reading it from the stream took over 2 s there), short enough for the test to wait it out.
    const expiresAt = Math.floor(Date.now() / 1000) + 6;
    const token = await signToken({ userId: alice.userId, role: 'customer' }, TEST_AUTH, expiresAt);
    await server.app.consumer?.waitUntilCaughtUp(10_000);
    const before = server.app.events.subscriberCount;
    const socket = await RawSocket.open(server.url, token);
    expect(await socket.next()).toMatchObject({ type: 'connection_ack' });
    socket.subscribe('watch', { query: WITH_STOCK });
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 5000 }).toBe(before + 1);
    await placeOrder('before-exp');
    expect(await socket.next()).toMatchObject({ id: 'watch', type: 'next', payload: { data: { orderEvents: {} } } });
    // The next thing the client hears is the close, at exp: no event of a later order.
    expect(await socket.next()).toEqual({ closed: 4401 });
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt * 1000);
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 2000 }).toBe(before);
  });
});

describe('socket bounds', () => {
  it('are read from the environment, and refused when they are not positive integers', () => {
    const websocket = loadServerConfig({
      WS_MAX_SOCKETS: '7',
      WS_MAX_OPERATIONS_PER_SOCKET: '3',
      WS_IDLE_TIMEOUT_MS: '1000',
      WS_KEEPALIVE_MS: '500',
      WS_CONNECTION_INIT_TIMEOUT_MS: '200',
      CLIENT_MAX_CONNECTIONS: '5',
      CLIENT_MAX_SUBSCRIPTIONS: '6',
    }).websocket;
    expect(websocket).toEqual({
      maxSockets: 7,
      maxOperationsPerSocket: 3,
      maxConnectionsPerClient: 5,
      maxSubscriptionsPerClient: 6,
      idleTimeoutMs: 1000,
      keepAliveMs: 500,
      connectionInitTimeoutMs: 200,
    });
    expect(loadServerConfig({}).websocket).toEqual(DEFAULT_WEBSOCKET_LIMITS);
    expect(() => loadServerConfig({ WS_MAX_OPERATIONS_PER_SOCKET: '0' })).toThrow(/WS_MAX_OPERATIONS_PER_SOCKET/);
  });

  const adminToken = () => tokenFor('ops', 'admin');
  const acked = async (socket: RawSocket) => expect(await socket.next()).toMatchObject({ type: 'connection_ack' });

  it('refuses an operation over the per-socket cap, and accepts one again after a complete', async () => {
    const socket = await RawSocket.open(bounded.url, await adminToken());
    await acked(socket);
    socket.subscribe('a', { query: 'subscription { orderEvents { type } }' });
    socket.subscribe('b', { query: 'subscription { orderEvents { type } }' });
    socket.subscribe('c', { query: 'subscription { orderEvents { type } }' });
    expect(await socket.next()).toMatchObject({
      id: 'c',
      type: 'error',
      payload: [{ extensions: { code: 'TOO_MANY_OPERATIONS' } }],
    });
    socket.send({ id: 'a', type: 'complete' });
    socket.subscribe('d', { query: '{ __typename }' });
    expect(await socket.next()).toMatchObject({ id: 'd', type: 'next', payload: { data: { __typename: 'Query' } } });
    socket.close();
    await socket.closed;
  });

  it('closes a socket that runs nothing after connection_init (idle timeout)', async () => {
    const socket = await RawSocket.open(bounded.url, await adminToken());
    await acked(socket);
    expect(await socket.closed).toBe(4000);
  });

  it('pings every socket (keep-alive)', async () => {
    const socket = await RawSocket.open(bounded.url, await adminToken());
    await new Promise((resolve) => socket.socket.once('ping', resolve));
    socket.close();
    await socket.closed;
  });

  it('refuses a socket over the per-server cap with 503', async () => {
    const open = await Promise.all(
      [1, 2, 3, 4].map(async () => RawSocket.open(bounded.url, undefined, { init: false })),
    );
    const refused = new WebSocket(bounded.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const status = await new Promise<number | undefined>((resolve) => {
      refused.once('unexpected-response', (_request, response) => resolve(response.statusCode));
      refused.once('open', () => resolve(undefined));
    });
    expect(status).toBe(503);
    for (const socket of open) socket.close();
    await Promise.all(open.map((socket) => socket.closed));
  });
});
