/**
 * Query.orders: every order of the shop across GSI2's shards, merged page by page. Walks in
 * both directions must see each order once, newest first; status views and windows must
 * agree with the users' own connections; cursors are signed and bound to their view and
 * window; a customer is refused on every transport.
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_SHARDS, orderShard } from '../src/table/keys.js';
import type { OrderModel, OrderStatus } from '../src/table/models.js';
import { aProduct, aUser, ordersOf, store } from './support/factories.js';
import { errorCodes, startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

const STATUSES: readonly OrderStatus[] = ['PLACED', 'SHIPPED', 'DELIVERED', 'CANCELLED'];
const product = aProduct();
const users = [aUser(), aUser(), aUser()];
// 45 orders: three users interleaved in time, four of them at the very same instant (ties on
// placedAt are broken by orderId, across shards).
const orders: OrderModel[] = users.flatMap((user, u) =>
  ordersOf(user, [product], 15, Date.parse('2026-05-01T00:00:00.000Z') + u * 20_000).map((order, i) => ({
    ...order,
    status: STATUSES[(i + u) % STATUSES.length]!,
  })),
);
const SAME_INSTANT = '2026-05-01T00:05:30.000Z';
for (const order of orders.slice(40, 44)) order.placedAt = SAME_INSTANT;

const newestFirst = (list: OrderModel[]) =>
  [...list]
    .sort((a, b) => (`${a.placedAt}#${a.orderId}` < `${b.placedAt}#${b.orderId}` ? 1 : -1))
    .map((order) => order.orderId);

const SHOP_ORDERS = `query ShopOrders($status: OrderStatus, $placedAfter: DateTime, $placedBefore: DateTime,
    $first: Int, $after: String, $last: Int, $before: String) {
  orders(status: $status, placedAfter: $placedAfter, placedBefore: $placedBefore,
      first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { orderId status placedAt } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    totalCount
  }
}`;
const USER_ORDERS = `query UserOrders($userId: ID!, $status: OrderStatus, $placedAfter: DateTime, $placedBefore: DateTime, $after: String) {
  user(userId: $userId) {
    orders(status: $status, placedAfter: $placedAfter, placedBefore: $placedBefore, first: 100, after: $after) {
      nodes { orderId }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await store(server.dynamo.doc, server.tableName, { users, products: [product], orders });
});
afterAll(() => server.stop());

type Vars = Record<string, unknown>;
async function shopPage(variables: Vars) {
  const response = await server.gql(SHOP_ORDERS, variables);
  expect(response.errors).toBeUndefined();
  return { page: response.data!.orders, cost: response.extensions!.cost!.dynamodb };
}

/** Every orderId of a view, walking forward `size` at a time; checks each page's flags. */
async function walkForward(size: number, filter: Vars = {}): Promise<string[]> {
  const seen: string[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const { page } = await shopPage({ ...filter, first: size, after });
    seen.push(...page.edges.map((edge: any) => edge.node.orderId));
    expect(page.pageInfo.hasPreviousPage).toBe(after !== undefined);
    if (!page.pageInfo.hasNextPage) return seen;
    expect(page.edges).toHaveLength(size);
    after = page.pageInfo.endCursor;
  }
  throw new Error('walk did not end');
}

async function walkBackward(size: number, filter: Vars = {}): Promise<string[]> {
  const seen: string[] = [];
  let before: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const { page } = await shopPage({ ...filter, last: size, before });
    seen.unshift(...page.edges.map((edge: any) => edge.node.orderId));
    if (!page.pageInfo.hasPreviousPage) return seen;
    before = page.pageInfo.startCursor;
  }
  throw new Error('walk did not end');
}

async function userOrders(userId: string, filter: Vars): Promise<string[]> {
  const response = await server.gql(USER_ORDERS, { userId, ...filter });
  expect(response.errors).toBeUndefined();
  expect(response.data!.user.orders.pageInfo.hasNextPage).toBe(false);
  return response.data!.user.orders.nodes.map((node: any) => node.orderId);
}

describe('a walk over the whole shop', () => {
  it('spreads the orders over every shard', () => {
    const used = new Set(orders.map((order) => orderShard(order.orderId)));
    expect(used.size).toBe(ORDER_SHARDS);
  });

  it.each([3, 7, 20, 45, 100])('forward, %i at a time, sees every order once, newest first', async (size) => {
    expect(await walkForward(size)).toEqual(newestFirst(orders));
  });

  it.each([7, 45])('backward, %i at a time, sees every order once, newest first', async (size) => {
    expect(await walkBackward(size)).toEqual(newestFirst(orders));
  });

  it('costs one Query per shard for a page, and has no totalCount', async () => {
    const { page, cost } = await shopPage({ first: 20 });
    expect(page.edges).toHaveLength(20);
    expect(page.totalCount).toBeNull();
    expect(cost.requests).toBe(ORDER_SHARDS);
  });

  it('reads one order of one user and its product in one more BatchGetItem', async () => {
    const response = await server.gql(
      `{ orders(first: 20) { nodes { orderId user { userId } items { product { name } } } } }`,
    );
    expect(response.errors).toBeUndefined();
    expect(response.data!.orders.nodes.every((order: any) => order.user.userId && order.items[0].product.name)).toBe(
      true,
    );
    expect(response.extensions!.cost!.dynamodb.requests).toBe(ORDER_SHARDS + 1);
  });
});

describe('status views and windows', () => {
  it.each(STATUSES)('the %s view holds exactly the users’ %s orders', async (status) => {
    const perUser = (await Promise.all(users.map((user) => userOrders(user.userId, { status })))).flat();
    const shopWide = await walkForward(4, { status });
    expect(shopWide).toEqual(newestFirst(orders.filter((order) => order.status === status)));
    expect([...shopWide].sort()).toEqual([...perUser].sort());
  });

  const windows: [string, Vars][] = [
    ['both bounds', { placedAfter: '2026-05-01T00:03:00.000Z', placedBefore: SAME_INSTANT }],
    ['a lower bound', { placedAfter: SAME_INSTANT }],
    ['an upper bound', { placedBefore: '2026-05-01T00:04:20.000Z' }],
    [
      'a status and both bounds',
      { status: 'SHIPPED', placedAfter: '2026-05-01T00:02:00.000Z', placedBefore: '2026-05-01T00:09:00.000Z' },
    ],
  ];
  it.each(windows)('a window with %s is half-open and matches the users’ windows', async (_name, filter) => {
    const inWindow = orders.filter(
      (order) =>
        (filter.status === undefined || order.status === filter.status) &&
        (filter.placedAfter === undefined || order.placedAt >= (filter.placedAfter as string)) &&
        (filter.placedBefore === undefined || order.placedAt < (filter.placedBefore as string)),
    );
    expect(inWindow.length).toBeGreaterThan(0);
    expect(inWindow.length).toBeLessThan(orders.length);
    expect(await walkForward(5, filter)).toEqual(newestFirst(inWindow));
    const perUser = (await Promise.all(users.map((user) => userOrders(user.userId, filter)))).flat();
    expect([...perUser].sort()).toEqual([...newestFirst(inWindow)].sort());
  });

  it('refuses a window that ends before it starts', async () => {
    const response = await server.gql(SHOP_ORDERS, {
      placedAfter: '2026-05-02T00:00:00.000Z',
      placedBefore: '2026-05-01T00:00:00.000Z',
    });
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('cursors', () => {
  const refused = async (variables: Vars) => {
    const response = await server.gql(SHOP_ORDERS, variables);
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors![0]!.message).not.toMatch(/GSI|ORDER#|Dynamo/);
  };

  it('refuses a cursor with a changed payload', async () => {
    const { page } = await shopPage({ first: 2 });
    const [version, payload, signature] = String(page.pageInfo.endCursor).split('.');
    const forged = Buffer.from(
      Buffer.from(payload!, 'base64url')
        .toString()
        .replace(/ORDER#2026-05/g, 'ORDER#2026-04'),
    ).toString('base64url');
    await refused({ first: 2, after: `${version}.${forged}.${signature}` });
  });

  it.each<[string, Vars]>([
    ['another status view', { status: 'PLACED' }],
    ['another window', { placedAfter: '2026-05-01T00:01:00.000Z' }],
  ])('refuses a cursor of the whole shop in %s', async (_name, other) => {
    const { page } = await shopPage({ first: 2 });
    await refused({ ...other, first: 2, after: page.pageInfo.endCursor });
  });

  it('refuses a cursor of a user’s orders', async () => {
    const own = await server.gql(
      `query($userId: ID!) { user(userId: $userId) { orders(first: 1) { pageInfo { endCursor } } } }`,
      { userId: users[0]!.userId },
    );
    const cursor = own.data!.user.orders.pageInfo.endCursor;
    expect(cursor).toEqual(expect.any(String));
    await refused({ first: 2, after: cursor });
  });
});

describe('access', () => {
  const transports = {
    http: async (query: string, token: string) => {
      const response = await server.gql(query, {}, { authorization: `Bearer ${token}` });
      return { data: response.data, codes: errorCodes(response) };
    },
    websocket: async (query: string, token: string) => {
      const client = createClient({
        url: server.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${token}` },
        retryAttempts: 0,
        lazy: true,
      });
      try {
        const result = await new Promise<any>((resolve, reject) => {
          let last: any;
          client.subscribe(
            { query },
            { next: (value) => (last = value), error: reject, complete: () => resolve(last) },
          );
        });
        return { data: result.data, codes: (result.errors ?? []).map((error: any) => error.extensions?.code) };
      } finally {
        await client.dispose();
      }
    },
  };

  it.each(Object.keys(transports) as (keyof typeof transports)[])(
    'refuses a customer with FORBIDDEN over %s, and serves an admin',
    async (transport) => {
      const query = '{ orders(first: 1) { nodes { orderId } } }';
      const customer = await transports[transport](query, await tokenFor(users[0]!.userId));
      expect(customer.codes).toEqual(['FORBIDDEN']);
      expect(customer.data ?? null).toBeNull();
      const admin = await transports[transport](query, await tokenFor('boss', 'admin'));
      expect(admin.codes).toEqual([]);
      expect(admin.data.orders.nodes).toHaveLength(1);
    },
  );
});
