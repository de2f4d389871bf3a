/**
 * Relay with only what docs/api.md ("Client setup notes") says: relay-compiler's artifacts and
 * persisted ids (examples/relay, `npm run relay`), its `persisted_queries.json` published with
 * `npm run documents -- publish` to a server under PERSISTED_ONLY, and the example's environment
 * (POST with `doc_id`, subscriptions over graphql-ws). It walks alice's orders as a Relay
 * connection the way `usePaginationFragment`'s `loadNext` does (the refetchable pagination query,
 * merged into the store by the connection handler), places an order and receives its event.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createClient as createWsClient } from 'graphql-ws';
import type { Client as WsClient } from 'graphql-ws';
import {
  commitMutation,
  createOperationDescriptor,
  fetchQuery,
  getPaginationMetadata,
  getPaginationVariables,
  getSelector,
  getValueAtPath,
  requestSubscription,
} from 'relay-runtime';
import type { Environment, SingularReaderSelector } from 'relay-runtime';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayEnvironment } from '../../examples/relay/src/environment.js';
import ordersQuery from '../../examples/relay/src/__generated__/OrdersQuery.graphql.js';
import ordersFragment from '../../examples/relay/src/__generated__/Orders_user.graphql.js';
import placeOrderMutation from '../../examples/relay/src/__generated__/OrdersPlaceOrderMutation.graphql.js';
import orderEventsSubscription from '../../examples/relay/src/__generated__/OrdersEventsSubscription.graphql.js';
import type { OrdersEventsSubscription } from '../../examples/relay/src/__generated__/OrdersEventsSubscription.graphql.js';
import type { OrdersPlaceOrderMutation } from '../../examples/relay/src/__generated__/OrdersPlaceOrderMutation.graphql.js';
import type { OrdersQuery } from '../../examples/relay/src/__generated__/OrdersQuery.graphql.js';
import { putItems } from '../../src/db/batchWrite.js';
import { projectRoot } from '../../src/projectRoot.js';
import { demoItems } from '../../src/seed/seed.js';
import { endpoint, startTestServer, tokenFor } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { runNode } from '../support/serverProcess.js';

const MANIFEST = path.join(projectRoot(), 'examples/relay/persisted_queries.json');
const PAGE = 10;

let server: TestServer;
let ws: WsClient;
let environment: Environment;
beforeAll(async () => {
  server = await startTestServer({ streams: true, playground: false, persistedOnly: true, documentsRefreshMs: 250 });
  await putItems(server.dynamo.doc, server.tableName, demoItems());
  const token = await tokenFor('alice');
  ws = createWsClient({
    url: server.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket, // a browser has its own
    connectionParams: { authorization: `Bearer ${token}` },
  });
  environment = createRelayEnvironment({ url: server.url, token, subscriptions: ws });
}, 60_000);
afterAll(async () => {
  await ws?.dispose();
  await server?.stop();
});

describe('Relay with relay-compiler persisted queries', () => {
  it("publishes the compiler's persisted_queries.json, then is served under PERSISTED_ONLY", async () => {
    const ordersId = ordersQuery.params.id!;
    expect(JSON.parse(readFileSync(MANIFEST, 'utf8'))).toHaveProperty(ordersId);
    await expect(fetchQuery<OrdersQuery>(environment, ordersQuery, { userId: 'alice' }).toPromise()).rejects.toThrow(
      /only runs trusted documents/,
    );

    const cli = runNode(
      'scripts/documents.ts',
      { DYNAMODB_ENDPOINT: endpoint(), TABLE_NAME: server.tableName, NODE_ENV: 'test' },
      ['publish', '--app', 'relay-example', '--version', '1.0.0', MANIFEST],
    );
    expect((await cli.exited).code).toBe(0);
    expect(cli.stdout()).toContain('published relay-example@1.0.0: 4 documents');
    await expect
      .poll(
        async () =>
          (
            await fetchQuery<OrdersQuery>(environment, ordersQuery, { userId: 'alice' })
              .toPromise()
              .catch(() => null)
          )?.user,
        {
          timeout: 10_000,
          interval: 100,
        },
      )
      .toBeTruthy();
  }, 60_000);

  it("walks alice's orders with loadNext, every order once, merged into one connection", async () => {
    const variables = { userId: 'alice' };
    const operation = createOperationDescriptor(ordersQuery, variables);
    const retained = environment.retain(operation);
    const data = await fetchQuery<OrdersQuery>(environment, ordersQuery, variables).toPromise();
    const selector = getSelector(ordersFragment, data!.user) as SingularReaderSelector;
    const { connectionPathInFragmentData, identifierField, paginationRequest, paginationMetadata } =
      getPaginationMetadata(ordersFragment, 'Orders');
    const connection = () =>
      getValueAtPath(environment.lookup(selector).data, connectionPathInFragmentData) as {
        edges: { node: { orderId: string } }[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };

    const sizes = [connection().edges.length];
    while (connection().pageInfo.hasNextPage && sizes.length < 20) {
      // What loadNext(PAGE) sends: the fragment's variables, the next cursor and the record's id.
      const next = getPaginationVariables(
        'forward',
        PAGE,
        connection().pageInfo.endCursor,
        selector.variables,
        {},
        paginationMetadata,
      );
      const identifier = (environment.lookup(selector).data as Record<string, unknown>)[identifierField!];
      await fetchQuery(environment, paginationRequest, { ...next, id: identifier }).toPromise();
      sizes.push(connection().edges.length);
    }
    retained.dispose();

    const orderIds = connection().edges.map((edge) => edge.node.orderId);
    expect(sizes.length).toBeGreaterThan(1);
    expect(sizes.every((size, i) => i === 0 || size > sizes[i - 1]!)).toBe(true);
    expect(new Set(orderIds).size).toBe(orderIds.length);
    expect(orderIds.length).toBeGreaterThanOrEqual(30);
    expect(connection().pageInfo.hasNextPage).toBe(false);
  }, 60_000);

  it('places an order and receives its event over graphql-ws', async () => {
    await server.app.consumer?.waitUntilCaughtUp(10_000);
    const before = server.app.events.subscriberCount;
    const event = new Promise<{ type: string; order: { orderId: string } }>((resolve, reject) => {
      const subscription = requestSubscription<OrdersEventsSubscription>(environment, {
        subscription: orderEventsSubscription,
        variables: {},
        onNext: (response) => {
          subscription.dispose();
          resolve(response!.orderEvents);
        },
        onError: reject,
      });
    });
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 5000 }).toBeGreaterThan(before);

    const orderId = await new Promise<string>((resolve, reject) =>
      commitMutation<OrdersPlaceOrderMutation>(environment, {
        mutation: placeOrderMutation,
        variables: {
          input: {
            userId: 'alice',
            items: [{ productId: 'book-ddia', quantity: 1 }],
            idempotencyKey: randomUUID(),
          },
        },
        onCompleted: (response, errors) =>
          errors?.length ? reject(new Error(errors[0]!.message)) : resolve(response.placeOrder.order!.orderId),
        onError: reject,
      }),
    );
    expect(await event).toEqual(
      expect.objectContaining({ type: 'ORDER_PLACED', order: expect.objectContaining({ orderId }) }),
    );
  }, 30_000);
});
