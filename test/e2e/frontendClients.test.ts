/**
 * The frontend contract with real clients, each with its default settings plus only what
 * docs/api.md ("Client setup notes") says: Apollo Client 4 (POST, subscriptions over graphql-ws)
 * and urql 6 (queries as GET, subscriptions over graphql-sse) each
 * walk alice's orders page by page, place an order and receive its event from the table's stream.
 */
import { randomUUID } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache, gql, split } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient as createSseClient } from 'graphql-sse';
import { Kind, OperationTypeNode } from 'graphql';
import { createClient as createWsClient, MessageType } from 'graphql-ws';
import { pipe, take, toPromise } from 'wonka';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../../src/db/batchWrite.js';
import { loadPersistedDocuments } from '../../src/pipeline/documents/persistedDocuments.js';
import { demoItems } from '../../src/seed/seed.js';
import { startTestServer, tokenFor } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';

/** The server's manifest texts, by operation name: what its own clients send (fragments may come first). */
const manifest = new Map(
  [...loadPersistedDocuments().values()].map((text) => [
    /\b(?:query|mutation|subscription) (\w+)\s*[({]/.exec(text)![1]!,
    text,
  ]),
);
const doc = (name: string): string => manifest.get(name)!;

interface OrderEvent {
  type: string;
  order: { orderId: string; status: string };
}

/** What each client does, through its own API. */
interface FrontendClient {
  /** One page of alice's orders after `after`. */
  ordersPage(after: string | null): Promise<{ orderIds: string[]; hasNextPage: boolean; endCursor: string | null }>;
  placeOrder(idempotencyKey: string): Promise<string>;
  /** Subscribes to the viewer's order events; resolves with the first, once `ready` has resolved. */
  nextEvent(): { ready: Promise<void>; event: Promise<OrderEvent> };
  dispose(): void;
}

const PAGE = 10;
let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ streams: true, playground: false });
  await putItems(server.dynamo.doc, server.tableName, demoItems());
  token = await tokenFor('alice');
});
afterAll(() => server?.stop());

const placeOrderInput = (idempotencyKey: string) => ({
  input: { userId: 'alice', items: [{ productId: 'book-ddia', quantity: 1 }], idempotencyKey },
});

function apolloClient(): FrontendClient {
  // docs/api.md: POST by default (HttpLink), subscriptions over graphql-ws (GraphQLWsLink).
  const ws = createWsClient({
    url: server.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket, // a browser has its own
    connectionParams: { authorization: `Bearer ${token}` },
  });
  const client = new ApolloClient({
    link: split(
      ({ query }) => {
        const definition = getMainDefinition(query);
        return definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.SUBSCRIPTION;
      },
      new GraphQLWsLink(ws),
      new HttpLink({ uri: server.url, headers: { authorization: `Bearer ${token}` } }),
    ),
    cache: new InMemoryCache(),
  });
  return {
    async ordersPage(after) {
      const { data } = await client.query<any>({
        query: gql(doc('UserOrdersPage')),
        variables: { userId: 'alice', first: PAGE, after },
        fetchPolicy: 'network-only',
      });
      const orders = data.user.orders;
      return {
        orderIds: orders.edges.map((edge: any) => edge.node.orderId),
        hasNextPage: orders.pageInfo.hasNextPage,
        endCursor: orders.pageInfo.endCursor,
      };
    },
    async placeOrder(idempotencyKey) {
      const { data } = await client.mutate<any>({
        mutation: gql(doc('PlaceOrder')),
        variables: placeOrderInput(idempotencyKey),
      });
      return data.placeOrder.order.orderId;
    },
    nextEvent() {
      let ready!: () => void;
      const subscribed = new Promise<void>((resolve) => (ready = resolve));
      const off = ws.on('message', (message) => message.type === MessageType.ConnectionAck && ready());
      const event = new Promise<OrderEvent>((resolve, reject) => {
        const subscription = client.subscribe<any>({ query: gql(doc('WatchMyOrders')) }).subscribe({
          next: ({ data }) => {
            subscription.unsubscribe();
            off();
            resolve(data.orderEvents);
          },
          error: reject,
        });
      });
      return { ready: subscribed, event };
    },
    dispose() {
      client.stop();
      void ws.dispose();
    },
  };
}

function urqlClient(): FrontendClient {
  // urql's defaults: queries as GET (its own print of the document, no preflight header),
  // mutations as POST. Subscriptions over graphql-sse at /graphql/stream (docs/api.md).
  const sse = createSseClient({ url: `${server.url}/stream`, headers: { authorization: `Bearer ${token}` } });
  let opened: (() => void) | undefined;
  const client = new Client({
    url: server.url,
    fetchOptions: { headers: { authorization: `Bearer ${token}` } },
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => {
            const unsubscribe = sse.subscribe(request as { query: string }, {
              next: (value) => sink.next(value as any),
              error: (error) => sink.error(error),
              complete: () => sink.complete(),
            });
            opened?.();
            return { unsubscribe };
          },
        }),
      }),
    ],
  });
  return {
    async ordersPage(after) {
      const result = await client
        .query(doc('UserOrdersPage'), { userId: 'alice', first: PAGE, after }, { requestPolicy: 'network-only' })
        .toPromise();
      if (result.error) throw result.error;
      const orders = result.data.user.orders;
      return {
        orderIds: orders.edges.map((edge: any) => edge.node.orderId),
        hasNextPage: orders.pageInfo.hasNextPage,
        endCursor: orders.pageInfo.endCursor,
      };
    },
    async placeOrder(idempotencyKey) {
      const result = await client.mutation(doc('PlaceOrder'), placeOrderInput(idempotencyKey)).toPromise();
      if (result.error) throw result.error;
      return result.data.placeOrder.order.orderId;
    },
    nextEvent() {
      const ready = new Promise<void>((resolve) => (opened = resolve));
      const event = pipe(client.subscription(doc('WatchMyOrders'), {}), take(1), toPromise).then((result) => {
        if (result.error) throw result.error;
        return result.data.orderEvents as OrderEvent;
      });
      return { ready, event };
    },
    dispose() {
      sse.dispose();
    },
  };
}

describe.each([
  ['Apollo Client 4', apolloClient],
  ['urql', urqlClient],
])('%s with its default settings', (_name, make) => {
  let client: FrontendClient;
  beforeAll(() => {
    client = make();
  });
  afterAll(() => client?.dispose());

  it("walks alice's orders page by page, every order once", async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (; pages < 20; pages++) {
      const page = await client.ordersPage(after);
      seen.push(...page.orderIds);
      if (!page.hasNextPage) break;
      after = page.endCursor;
    }
    expect(pages).toBeGreaterThan(1);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThanOrEqual(30);
  });

  it('places an order and receives its event from the stream', async () => {
    await server.app.consumer?.waitUntilCaughtUp(10_000);
    const before = server.app.events.subscriberCount;
    const { ready, event } = client.nextEvent();
    await ready;
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 5000 }).toBeGreaterThan(before);
    const orderId = await client.placeOrder(randomUUID());
    expect(await event).toEqual(
      expect.objectContaining({ type: 'ORDER_PLACED', order: expect.objectContaining({ orderId }) }),
    );
  }, 30_000);
});
