import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../src/db/cursor.js';
import { userOrdersQuery } from '../src/db/loaders.js';
import { userOrderSK, userPK } from '../src/table/keys.js';
import type { OrderModel, OrderStatus, ProductModel } from '../src/table/models.js';
import { commandLog } from './support/commandLog.js';
import { aProduct, aUser, ordersOf, store } from './support/factories.js';
import { errorCodes, startTestServer, TEST_CURSOR_SECRET } from './support/harness.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';

interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}
interface Page<N> {
  edges: { cursor: string; node: N }[];
  pageInfo: PageInfo;
}
interface OrderNode {
  orderId: string;
  placedAt: string;
  status: OrderStatus;
}
interface OrdersPage extends Page<OrderNode> {
  totalCount: number | null;
}
interface ProductNode {
  productId: string;
  name: string;
}
interface ConnectionArgs {
  first?: number;
  after?: string;
  last?: number;
  before?: string;
}

const ORDERS = `query Orders($userId: ID!, $first: Int, $after: String, $last: Int, $before: String, $status: OrderStatus) {
  user(userId: $userId) {
    orders(first: $first, after: $after, last: $last, before: $before, status: $status) {
      totalCount
      edges { cursor node { orderId placedAt status } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
}`;

const PRODUCTS = `query Products($category: String!, $first: Int, $after: String, $last: Int, $before: String) {
  products(category: $category, first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { productId name } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

const STATUSES: readonly OrderStatus[] = ['PLACED', 'SHIPPED', 'DELIVERED', 'CANCELLED'];
const CATEGORY = 'gadgets';
const OTHER_CATEGORY = 'tools';
/** Names in no particular order, mixed case; the three apples differ only in case. */
const GADGETS: [name: string, productId?: string][] = [
  ['Router'],
  ['apple', 'gadget-c'],
  ['Kettle'],
  ['APPLE', 'gadget-b'],
  ['banana'],
  ['Apple', 'gadget-a'],
  ['Lampshade'],
  ['lamp'],
  ['Fan-Heater'],
  ['fan'],
  ['Apricot'],
  ['Blender'],
  ['Cable-USB-C'],
  ['cable'],
  ['Camera'],
  ['drone'],
  ['Earbuds'],
  ['Gimbal'],
  ['hub'],
  ['Mixer'],
  ['Neon-Sign'],
  ['oven'],
  ['Projector'],
  ['speaker'],
  ['Tablet'],
];

const log = commandLog();
let server: TestServer;

const shopper = aUser();
const other = aUser();
const newcomer = aUser();
const grower = aUser();
const gadgets: ProductModel[] = GADGETS.map(([name, productId]) =>
  aProduct({ name, category: CATEGORY, ...(productId ? { productId } : {}) }),
);
const tools: ProductModel[] = ['Hammer', 'Saw', 'Drill'].map((name) => aProduct({ name, category: OTHER_CATEGORY }));
const shopperOrders: OrderModel[] = ordersOf(shopper, [tools[0]!], 47).map((order, i) => ({
  ...order,
  status: STATUSES[i % STATUSES.length]!,
}));
const otherOrders = ordersOf(other, [tools[1]!], 4);
const growerOrders = ordersOf(grower, [tools[2]!], 15);

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const newestFirst = (orders: OrderModel[]) => [...orders].sort((a, b) => compare(b.placedAt, a.placedAt));
/** What User.orders must return for the shopper: newest first. */
const expectedOrderIds = newestFirst(shopperOrders).map((order) => order.orderId);
/** What products(category) must return: lower-cased name, then productId. */
const expectedGadgetIds = [...gadgets]
  .sort((a, b) => compare(a.name.toLowerCase(), b.name.toLowerCase()) || compare(a.productId, b.productId))
  .map((product) => product.productId);

beforeAll(async () => {
  server = await startTestServer({ configureClient: (client) => log.attach(client) });
  await store(server.dynamo.doc, server.tableName, {
    users: [shopper, other, newcomer, grower],
    products: [...gadgets, ...tools],
    orders: [...shopperOrders, ...otherOrders, ...growerOrders],
  });
});
afterAll(() => server.stop());
beforeEach(() => log.clear());

/** Sends `query`, expecting no errors; returns the data and the DynamoDB operations it cost. */
async function ask<T>(query: string, variables: Record<string, unknown>) {
  log.clear();
  const response = await server.gql<T>(query, variables);
  expect(response.errors).toBeUndefined();
  return {
    data: response.data!,
    requests: response.extensions?.cost?.dynamodb.requests,
    operations: [...log.operations],
  };
}

async function ordersPage(userId: string, args: ConnectionArgs & { status?: OrderStatus } = {}) {
  const { data, ...cost } = await ask<{ user: { orders: OrdersPage } }>(ORDERS, { userId, ...args });
  return { page: data.user.orders, ...cost };
}

async function productsPage(category: string, args: ConnectionArgs = {}) {
  const { data, ...cost } = await ask<{ products: Page<ProductNode> }>(PRODUCTS, { category, ...args });
  return { page: data.products, ...cost };
}

/** Follows endCursor until hasNextPage is false; `between` runs after each page. */
async function walkForward<P extends Page<unknown>>(
  read: (after: string | undefined) => Promise<P>,
  between: (pageNumber: number) => Promise<void> = async () => {},
): Promise<P[]> {
  const pages: P[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await read(after);
    pages.push(page);
    if (!page.pageInfo.hasNextPage) return pages;
    if (pages.length > 50) expect.fail('the forward walk does not end');
    await between(pages.length);
    after = page.pageInfo.endCursor!;
  }
}

/** Follows startCursor until hasPreviousPage is false; returns the pages in the order read. */
async function walkBackward<P extends Page<unknown>>(read: (before: string | undefined) => Promise<P>): Promise<P[]> {
  const pages: P[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await read(before);
    pages.push(page);
    if (!page.pageInfo.hasPreviousPage) return pages;
    if (pages.length > 50) expect.fail('the backward walk does not end');
    before = page.pageInfo.startCursor!;
  }
}

const orderIdsOf = (pages: Page<OrderNode>[]) => pages.flatMap((page) => page.edges.map((edge) => edge.node.orderId));
const productIdsOf = (pages: Page<ProductNode>[]) =>
  pages.flatMap((page) => page.edges.map((edge) => edge.node.productId));
const sizesOf = (pages: Page<unknown>[]) => pages.map((page) => page.edges.length);
/** Page sizes of a walk over `total` items, `size` at a time, in the order read. */
const expectedSizes = (total: number, size: number) =>
  Array.from({ length: Math.ceil(total / size) }, (_, i) => Math.min(size, total - i * size));

/** `text` with the character at `index` replaced by another base64url character. */
const alterCharacter = (text: string, index: number) =>
  text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1);
const cursorParts = (cursor: string) => cursor.split('.') as [string, string, string];

describe('User.orders, walked forward', () => {
  it.each([10, 7])('returns every order exactly once, newest first, %i at a time', async (first) => {
    const pages = await walkForward(async (after) => (await ordersPage(shopper.userId, { first, after })).page);
    expect(orderIdsOf(pages)).toEqual(expectedOrderIds);
    expect(sizesOf(pages)).toEqual(expectedSizes(47, first));
  });

  it('returns orders by placedAt descending', async () => {
    const { page } = await ordersPage(shopper.userId, { first: 47 });
    const placedAt = page.edges.map((edge) => edge.node.placedAt);
    expect(placedAt).toEqual([...placedAt].sort().reverse());
    expect(new Set(placedAt).size).toBe(47);
  });

  it.each([10, 7])(
    'costs one Query for the first page with the user, then a GetItem and a Query per page of %i',
    async (first) => {
      const costs: { requests: number | undefined; operations: string[] }[] = [];
      await walkForward(async (after) => {
        const { page, requests, operations } = await ordersPage(shopper.userId, { first, after });
        costs.push({ requests, operations: operations.sort() });
        return page;
      });
      expect(costs).toHaveLength(Math.ceil(47 / first));
      // The first page comes with the profile (the user's item collection); after a cursor, the
      // user's read and the page's Query run side by side (lookahead), in either order.
      expect(costs[0]).toEqual({ requests: 1, operations: ['Query'] });
      for (const cost of costs.slice(1)) expect(cost).toEqual({ requests: 2, operations: ['GetItem', 'Query'] });
    },
  );

  it('says the first page has a next page and no previous one', async () => {
    const { page } = await ordersPage(shopper.userId, { first: 10 });
    expect(page.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  it('says the last page has no next page and a previous one', async () => {
    const pages = await walkForward(async (after) => (await ordersPage(shopper.userId, { first: 10, after })).page);
    expect(pages.at(-1)!.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(pages.slice(0, -1).every((page) => page.pageInfo.hasNextPage)).toBe(true);
  });

  it.each([
    [46, true],
    [47, false],
    [48, false],
  ])('with first: %i over 47 orders reports hasNextPage %s', async (first, hasNextPage) => {
    const { page } = await ordersPage(shopper.userId, { first });
    expect(page.edges).toHaveLength(Math.min(first, 47));
    expect(page.pageInfo.hasNextPage).toBe(hasNextPage);
  });

  it('skips nothing and repeats nothing while newer orders are written between pages', async () => {
    const later = Date.parse(growerOrders.at(-1)!.placedAt) + 3_600_000;
    let written = 0;
    const pages = await walkForward(
      async (after) => (await ordersPage(grower.userId, { first: 4, after })).page,
      async (pageNumber) => {
        await store(server.dynamo.doc, server.tableName, {
          orders: ordersOf(grower, [tools[2]!], 2, later + pageNumber * 600_000),
        });
        written += 2;
      },
    );
    expect(orderIdsOf(pages)).toEqual(newestFirst(growerOrders).map((order) => order.orderId));
    // The new orders were really there to be skipped over: they lead the connection now.
    const { page } = await ordersPage(grower.userId, { first: written });
    expect(written).toBe(6);
    expect(page.edges.every((edge) => edge.node.placedAt > growerOrders.at(-1)!.placedAt)).toBe(true);
  });
});

describe('User.orders, walked backward', () => {
  it.each([10, 7])('returns the same orders in the same order, %i at a time', async (last) => {
    const pages = await walkBackward(async (before) => (await ordersPage(shopper.userId, { last, before })).page);
    expect(orderIdsOf([...pages].reverse())).toEqual(expectedOrderIds);
    expect(sizesOf(pages)).toEqual(expectedSizes(47, last));
  });

  it('starts at the oldest orders, with no next page', async () => {
    const { page } = await ordersPage(shopper.userId, { last: 10 });
    expect(page.edges.map((edge) => edge.node.orderId)).toEqual(expectedOrderIds.slice(-10));
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it('ends at the newest orders, with no previous page', async () => {
    const pages = await walkBackward(async (before) => (await ordersPage(shopper.userId, { last: 10, before })).page);
    const newest = pages.at(-1)!;
    expect(newest.edges.map((edge) => edge.node.orderId)).toEqual(expectedOrderIds.slice(0, 7));
    expect(newest.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(pages.slice(0, -1).every((page) => page.pageInfo.hasPreviousPage)).toBe(true);
  });

  it('costs one GetItem and one Query per page', async () => {
    const { page } = await ordersPage(shopper.userId, { last: 10 });
    const second = await ordersPage(shopper.userId, { last: 10, before: page.pageInfo.startCursor! });
    expect({ ...second, operations: second.operations.sort() }).toMatchObject({
      requests: 2,
      operations: ['GetItem', 'Query'],
    });
  });
});

describe('User.orders cursors', () => {
  it('gives every edge its own cursor, and startCursor and endCursor are the first and last', async () => {
    const { page } = await ordersPage(shopper.userId, { first: 10 });
    const cursors = page.edges.map((edge) => edge.cursor);
    expect(cursors.every((cursor) => typeof cursor === 'string' && cursor.length > 0)).toBe(true);
    expect(new Set(cursors).size).toBe(10);
    expect(page.pageInfo.startCursor).toBe(cursors[0]);
    expect(page.pageInfo.endCursor).toBe(cursors[9]);
  });

  it('resumes right after an edge taken from the middle of a page', async () => {
    const { page } = await ordersPage(shopper.userId, { first: 10 });
    const resumed = await ordersPage(shopper.userId, { first: 10, after: page.edges[4]!.cursor });
    expect(resumed.page.edges.map((edge) => edge.node.orderId)).toEqual(expectedOrderIds.slice(5, 15));
    expect(resumed.page.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
  });

  it('returns the orders right before an edge taken from the middle of a page', async () => {
    const { page } = await ordersPage(shopper.userId, { first: 10 });
    const earlier = await ordersPage(shopper.userId, { last: 3, before: page.edges[4]!.cursor });
    expect(earlier.page.edges.map((edge) => edge.node.orderId)).toEqual(expectedOrderIds.slice(1, 4));
    expect(earlier.page.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
  });

  it('takes as a cursor the order’s own key, signed for this connection', async () => {
    const order = newestFirst(shopperOrders)[9]!;
    const connection = userOrdersQuery(server.tableName, shopper.userId, null);
    const cursor = new CursorCodec(TEST_CURSOR_SECRET).encode(connection.connection, {
      PK: userPK(shopper.userId),
      SK: userOrderSK(order.placedAt, order.orderId),
    });
    const { page } = await ordersPage(shopper.userId, { first: 3, after: cursor });
    expect(page.edges.map((edge) => edge.node.orderId)).toEqual(expectedOrderIds.slice(10, 13));
  });
});

describe('User.orders totalCount and status filter', () => {
  it.each([
    ['the shopper', shopper, 47],
    ['another user', other, 4],
  ])('reports the profile’s order count for %s', async (_who, user, count) => {
    const { page } = await ordersPage(user.userId, { first: 1 });
    expect(page.totalCount).toBe(count);
  });

  it.each(STATUSES)('reports the profile’s %s count as totalCount when filtered by that status', async (status) => {
    const { page } = await ordersPage(shopper.userId, { first: 1, status });
    expect(page.totalCount).toBe(shopperOrders.filter((order) => order.status === status).length);
    expect(page.edges).toHaveLength(1);
  });

  it.each(STATUSES)('returns only %s orders, newest first, across pages', async (status) => {
    const expected = newestFirst(shopperOrders.filter((order) => order.status === status)).map((o) => o.orderId);
    const pages = await walkForward(
      async (after) => (await ordersPage(shopper.userId, { first: 4, after, status })).page,
    );
    expect(orderIdsOf(pages)).toEqual(expected);
    expect(pages.flatMap((page) => page.edges.map((edge) => edge.node.status)).every((s) => s === status)).toBe(true);
    expect(pages.length).toBeGreaterThan(1);
  });

  it('walks a status backward to the same orders', async () => {
    const expected = newestFirst(shopperOrders.filter((order) => order.status === 'DELIVERED')).map((o) => o.orderId);
    const pages = await walkBackward(
      async (before) => (await ordersPage(shopper.userId, { last: 5, before, status: 'DELIVERED' })).page,
    );
    expect(orderIdsOf([...pages].reverse())).toEqual(expected);
  });

  it('costs one GetItem and one Query for a page of one status', async () => {
    const first = await ordersPage(shopper.userId, { first: 4, status: 'PLACED' });
    const second = await ordersPage(shopper.userId, {
      first: 4,
      status: 'PLACED',
      after: first.page.pageInfo.endCursor!,
    });
    expect({ ...second, operations: second.operations.sort() }).toMatchObject({
      requests: 2,
      operations: ['GetItem', 'Query'],
    });
  });
});

describe('products(category)', () => {
  it.each([10, 7])('walks forward in name order, case-insensitive, then productId, %i at a time', async (first) => {
    const pages = await walkForward(async (after) => (await productsPage(CATEGORY, { first, after })).page);
    expect(productIdsOf(pages)).toEqual(expectedGadgetIds);
    expect(sizesOf(pages)).toEqual(expectedSizes(25, first));
  });

  it('orders names that differ only in case by productId', async () => {
    const { page } = await productsPage(CATEGORY, { first: 3 });
    expect(page.edges.map((edge) => [edge.node.name, edge.node.productId])).toEqual([
      ['Apple', 'gadget-a'],
      ['APPLE', 'gadget-b'],
      ['apple', 'gadget-c'],
    ]);
  });

  it.each([10, 7])('walks backward to the same products in the same order, %i at a time', async (last) => {
    const pages = await walkBackward(async (before) => (await productsPage(CATEGORY, { last, before })).page);
    expect(productIdsOf([...pages].reverse())).toEqual(expectedGadgetIds);
    expect(sizesOf(pages)).toEqual(expectedSizes(25, last));
  });

  it('marks both ends of a forward walk', async () => {
    const pages = await walkForward(async (after) => (await productsPage(CATEGORY, { first: 10, after })).page);
    expect(pages[0]!.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(pages.at(-1)!.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it('marks both ends of a backward walk', async () => {
    const pages = await walkBackward(async (before) => (await productsPage(CATEGORY, { last: 10, before })).page);
    expect(pages[0]!.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(pages.at(-1)!.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  it('costs one Query per page', async () => {
    const { page } = await productsPage(CATEGORY, { first: 10 });
    const second = await productsPage(CATEGORY, { first: 10, after: page.pageInfo.endCursor! });
    expect(second).toMatchObject({ requests: 1, operations: ['Query'] });
  });

  it('keeps each category to its own products', async () => {
    const { page } = await productsPage(OTHER_CATEGORY);
    expect(page.edges.map((edge) => edge.node.name)).toEqual(['Drill', 'Hammer', 'Saw']);
  });
});

describe('cursors from elsewhere', () => {
  /** Cursors issued by the server, collected once. */
  const issued: Record<string, string> = {};

  beforeAll(async () => {
    issued.orders = (await ordersPage(shopper.userId, { first: 5 })).page.pageInfo.endCursor!;
    issued.otherOrders = (await ordersPage(other.userId, { first: 2 })).page.pageInfo.endCursor!;
    issued.shipped = (await ordersPage(shopper.userId, { first: 2, status: 'SHIPPED' })).page.pageInfo.endCursor!;
    issued.placed = (await ordersPage(shopper.userId, { first: 2, status: 'PLACED' })).page.pageInfo.endCursor!;
    issued.gadgets = (await productsPage(CATEGORY, { first: 5 })).page.pageInfo.endCursor!;
    issued.tools = (await productsPage(OTHER_CATEGORY, { first: 1 })).page.pageInfo.endCursor!;
  });

  const forgedPayload = () => {
    const [version, payload, signature] = cursorParts(issued.orders!);
    return `${version}.${alterCharacter(payload, Math.floor(payload.length / 2))}.${signature}`;
  };
  const forgedSignature = () => {
    const [version, payload, signature] = cursorParts(issued.orders!);
    return `${version}.${payload}.${alterCharacter(signature, 0)}`;
  };
  const otherSecret = () => {
    const order = newestFirst(shopperOrders)[4]!;
    return new CursorCodec('not-the-server-secret').encode(
      userOrdersQuery(server.tableName, shopper.userId, null).connection,
      { PK: userPK(shopper.userId), SK: userOrderSK(order.placedAt, order.orderId) },
    );
  };

  type Case = [
    description: string,
    request: () => { query: string; variables: Record<string, unknown> },
    argumentName: string,
  ];
  const onOrders = (variables: Record<string, unknown>) => ({
    query: ORDERS,
    variables: { userId: shopper.userId, ...variables },
  });
  const onProducts = (variables: Record<string, unknown>) => ({
    query: PRODUCTS,
    variables: { category: CATEGORY, ...variables },
  });

  const ordersCases: Case[] = [
    ['an orders cursor with one payload character changed', () => onOrders({ after: forgedPayload() }), 'after'],
    ['an orders cursor with one signature character changed', () => onOrders({ after: forgedSignature() }), 'after'],
    ['a forged cursor passed as before', () => onOrders({ last: 5, before: forgedSignature() }), 'before'],
    ['a cursor signed with another secret', () => onOrders({ after: otherSecret() }), 'after'],
    ['a cursor from another user’s orders', () => onOrders({ after: issued.otherOrders }), 'after'],
    ['a products cursor', () => onOrders({ after: issued.gadgets }), 'after'],
    ['a status-filtered cursor on the unfiltered orders', () => onOrders({ after: issued.shipped }), 'after'],
    [
      'an unfiltered cursor on status-filtered orders',
      () => onOrders({ after: issued.orders, status: 'SHIPPED' }),
      'after',
    ],
    ['a cursor of another status', () => onOrders({ after: issued.placed, status: 'SHIPPED' }), 'after'],
    ['garbage', () => onOrders({ after: 'not-a-cursor' }), 'after'],
    ['an orders cursor with "=" appended to its signature', () => onOrders({ after: `${issued.orders}=` }), 'after'],
  ];
  const productsCases: Case[] = [
    ['a cursor from another category', () => onProducts({ after: issued.tools }), 'after'],
    ['an orders cursor', () => onProducts({ after: issued.orders }), 'after'],
    [
      'a products cursor with one signature character changed',
      () => {
        const [version, payload, signature] = cursorParts(issued.gadgets!);
        return onProducts({ after: `${version}.${payload}.${alterCharacter(signature, 3)}` });
      },
      'after',
    ],
  ];

  const refusal = async (request: () => { query: string; variables: Record<string, unknown> }) => {
    const { query, variables } = request();
    log.clear();
    const response: GraphQLResponse = await server.gql(query, variables);
    return { response, operations: [...log.operations] };
  };

  it.each(ordersCases)('refuses %s on User.orders before any Query', async (_case, request, argumentName) => {
    const { response, operations } = await refusal(request);
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors?.[0]?.extensions?.argumentName).toBe(argumentName);
    expect(response.errors?.[0]?.path).toEqual(['user', 'orders']);
    // The user is read first (the connection hangs off it); the cursor is refused before the Query.
    expect(operations).toEqual(['GetItem']);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(1);
  });

  it.each(productsCases)('refuses %s on products before any Query', async (_case, request, argumentName) => {
    const { response, operations } = await refusal(request);
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors?.[0]?.extensions?.argumentName).toBe(argumentName);
    expect(operations).toEqual([]);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(0);
  });

  it("refuses a forged cursor on one user's orders without failing the page read beside it", async () => {
    // Both pages start in the same tick, so they are one batch of the page loader.
    const response = await server.gql<{ good: { orders: Page<OrderNode> } | null }>(
      `query Two($bad: ID!, $good: ID!, $after: String) {
        bad: user(userId: $bad) { orders(first: 2, after: $after) { edges { node { orderId } } } }
        good: user(userId: $good) { orders(first: 2, status: SHIPPED) { edges { node { orderId status } } } }
      }`,
      { bad: shopper.userId, good: shopper.userId, after: forgedSignature() },
    );
    expect(response.errors?.map((error) => [error.path, error.extensions?.code])).toEqual([
      [['bad', 'orders'], 'BAD_USER_INPUT'],
    ]);
    expect(response.data?.good?.orders.edges.map((edge) => edge.node.status)).toEqual(['SHIPPED', 'SHIPPED']);
  });

  it('still accepts the unaltered cursors these were made from', async () => {
    const orders = await ordersPage(shopper.userId, { first: 1, after: issued.orders });
    const gadgets = await productsPage(CATEGORY, { first: 1, after: issued.gadgets });
    expect(orders.page.edges.map((edge) => edge.node.orderId)).toEqual([expectedOrderIds[5]]);
    expect(gadgets.page.edges.map((edge) => edge.node.productId)).toEqual([expectedGadgetIds[5]]);
  });
});

describe('page size and argument rules', () => {
  const refused = async (variables: ConnectionArgs) => {
    log.clear();
    const response: GraphQLResponse = await server.gql(ORDERS, { userId: shopper.userId, ...variables });
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(log.operations).not.toContain('Query');
    return response.errors![0]!;
  };

  it.each([
    ['first', 101],
    ['last', 101],
    ['first', 1000],
  ])('refuses %s: %i, naming the argument and the cap of 100', async (argument, size) => {
    const error = await refused({ [argument]: size });
    expect(error.extensions?.argumentName).toBe(argument);
    expect(error.message).toContain(argument);
    expect(error.message).toContain('100');
  });

  it.each(['first', 'last'])('refuses a negative %s, naming the argument and both limits', async (argument) => {
    const error = await refused({ [argument]: -1 });
    expect(error.extensions?.argumentName).toBe(argument);
    expect(error.message).toContain(argument);
    expect(error.message).toMatch(/from 0 to 100/);
  });

  it('refuses first: 101 on products too', async () => {
    const response = await server.gql(PRODUCTS, { category: CATEGORY, first: 101 });
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors?.[0]?.extensions?.argumentName).toBe('first');
    expect(response.extensions?.cost?.dynamodb.requests).toBe(0);
  });

  let orderCursor: string;
  beforeAll(async () => {
    orderCursor = (await ordersPage(shopper.userId, { first: 10 })).page.pageInfo.endCursor!;
  });

  it.each<[string, () => ConnectionArgs, string]>([
    ['first and last', () => ({ first: 5, last: 5 }), 'last'],
    ['after and before', () => ({ after: orderCursor, before: orderCursor }), 'before'],
    ['first and before', () => ({ first: 5, before: orderCursor }), 'before'],
    ['last and after', () => ({ last: 5, after: orderCursor }), 'after'],
  ])('refuses %s together', async (_case, args, argumentName) => {
    const error = await refused(args());
    expect(error.extensions?.argumentName).toBe(argumentName);
  });

  it('returns 20 orders when neither first nor last is given', async () => {
    const { page } = await ordersPage(shopper.userId);
    expect(page.edges.map((edge) => edge.node.orderId)).toEqual(expectedOrderIds.slice(0, 20));
    expect(page.pageInfo.hasNextPage).toBe(true);
  });

  it('returns 20 products when neither first nor last is given', async () => {
    const { page } = await productsPage(CATEGORY);
    expect(page.edges.map((edge) => edge.node.productId)).toEqual(expectedGadgetIds.slice(0, 20));
  });

  it('returns 20 orders after a cursor when only after is given', async () => {
    const { page } = await ordersPage(shopper.userId, { after: orderCursor });
    expect(page.edges.map((edge) => edge.node.orderId)).toEqual(expectedOrderIds.slice(10, 30));
  });

  it('returns 20 orders before a cursor when only before is given', async () => {
    const { page: tail } = await ordersPage(shopper.userId, { last: 5 });
    const { page } = await ordersPage(shopper.userId, { before: tail.pageInfo.startCursor! });
    expect(page.edges.map((edge) => edge.node.orderId)).toEqual(expectedOrderIds.slice(22, 42));
  });

  it('returns an empty page for first: 0, with more to come', async () => {
    const { page } = await ordersPage(shopper.userId, { first: 0 });
    expect(page).toEqual({
      totalCount: 47,
      edges: [],
      pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null },
    });
  });

  it('gives a user without orders an empty connection', async () => {
    const { page } = await ordersPage(newcomer.userId, { first: 10 });
    expect(page).toEqual({
      totalCount: 0,
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
    });
  });

  it('gives a user without orders an empty connection read backward', async () => {
    const { page } = await ordersPage(newcomer.userId, { last: 10 });
    expect(page.edges).toEqual([]);
    expect(page.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null });
  });
});
