/**
 * A user and the first page of their orders in one Query over the user's item collection,
 * checked against a second server on the same table that reads them the ordinary way
 * (a BatchGetItem and a Query): same answers, cursors included, one request fewer.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CursorCodec } from '../src/db/cursor.js';
import { userOrdersQuery } from '../src/db/loaders.js';
import { fusablePage, userCollectionParams } from '../src/db/userCollection.js';
import { userPK } from '../src/table/keys.js';
import { commandLog } from './support/commandLog.js';
import { aProduct, aUser, ordersOf, store } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

describe('the item-collection read, offline', () => {
  const codec = new CursorCodec('offline');
  const orders = userOrdersQuery('T', 'u1', null);

  it('asks for the profile, the page and one more order, newest first, strongly consistent', () => {
    expect(userCollectionParams('T', 'u1', 20)).toEqual({
      TableName: 'T',
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :orders AND :profile',
      ExpressionAttributeValues: { ':pk': 'USER#u1', ':orders': 'ORDER#', ':profile': 'PROFILE' },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: 22,
    });
  });

  it.each([
    ['no arguments (the default page)', null, {}, 20],
    ['first: 5', null, { first: 5 }, 5],
    ['first: 0', null, { first: 0 }, 0],
    ['a status filter', 'PLACED', { first: 5 }, null],
    ['a cursor', null, { first: 5, after: 'x' }, null],
    ['last', null, { last: 5 }, null],
    ['before', null, { before: 'x' }, null],
    ['first above the cap', null, { first: 101 }, null],
  ] as const)('with %s fuses a page of %s', (_case, status, args, size) => {
    expect(fusablePage(status, args, orders, codec)).toBe(size);
  });
});

const log = commandLog();
let fused: TestServer;
let plain: TestServer;

const product = aProduct();
const buyer = aUser();
const fresh = aUser();
const buyerOrders = ordersOf(buyer, [product], 12);

beforeAll(async () => {
  fused = await startTestServer({ configureClient: (client) => log.attach(client) });
  plain = await startTestServer({ tableName: fused.tableName, itemCollections: false });
  await store(fused.dynamo.doc, fused.tableName, { users: [buyer, fresh], products: [product], orders: buyerOrders });
});
afterAll(async () => {
  await plain.stop();
  await fused.stop();
});

const ORDERS = `query Orders(
  $userId: ID!
  $first: Int
  $after: String
  $last: Int
  $status: OrderStatus
  $placedAfter: DateTime
) {
  user(userId: $userId) {
    userId name
    orders(first: $first, after: $after, last: $last, status: $status, placedAfter: $placedAfter) {
      totalCount
      edges { cursor node { orderId placedAt status items { product { name } } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
}`;

/** Asks both servers; expects the same answer and returns the fused server's operations. */
async function both(query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) {
  log.clear();
  const answer = await fused.gql(query, variables, headers);
  const operations = [...log.operations].sort();
  const reference = await plain.gql(query, variables, headers);
  expect(answer.errors).toBeUndefined();
  expect(answer.data).toEqual(reference.data);
  return { data: answer.data!, operations, requests: answer.extensions?.cost?.dynamodb.requests };
}

const ONE_PAGE = `query Orders($userId: ID!, $first: Int) {
  user(userId: $userId) {
    userId name
    orders(first: $first) {
      totalCount
      edges { cursor node { orderId placedAt status } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
}`;

describe('a user with the first page of their orders', () => {
  it.each([0, 1, 5, 11, 12, 13, 100])('answers first: %i as the ordinary reads do, in one Query', async (first) => {
    const { data, operations, requests } = await both(ONE_PAGE, { userId: buyer.userId, first });
    expect(data.user.orders.edges).toHaveLength(Math.min(first, 12));
    expect(data.user.orders.pageInfo.hasNextPage).toBe(first < 12);
    expect({ operations, requests }).toEqual({ operations: ['Query'], requests: 1 });
  });

  it('answers a user without orders and a missing user in one Query', async () => {
    const empty = await both(ONE_PAGE, { userId: fresh.userId, first: 5 });
    expect(empty.data.user).toMatchObject({ userId: fresh.userId, orders: { edges: [], totalCount: 0 } });
    expect(empty.requests).toBe(1);
    const missing = await both(ONE_PAGE, { userId: 'nobody-here', first: 5 });
    expect(missing.data.user).toBeNull();
    expect(missing.requests).toBe(1);
  });

  it('gives cursors the ordinary next page accepts', async () => {
    const first = await both(ONE_PAGE, { userId: buyer.userId, first: 5 });
    const next = await both(ORDERS, {
      userId: buyer.userId,
      first: 5,
      after: first.data.user.orders.pageInfo.endCursor,
    });
    expect(next.data.user.orders.edges.map((edge: { node: { orderId: string } }) => edge.node.orderId)).toHaveLength(5);
    expect(next.data.user.orders.pageInfo.hasPreviousPage).toBe(true);
  });

  it.each([
    ['a status filter', { first: 5, status: 'PLACED' }],
    ['last', { last: 5 }],
    ['a placedAt window', { first: 5, placedAfter: '2000-01-01T00:00:00.000Z' }],
  ])('with %s reads the user and the page side by side', async (_case, args) => {
    const { operations, requests } = await both(ORDERS, { userId: buyer.userId, ...args });
    // The user's read beside the page's Query, then the one product's: one key each, a GetItem.
    expect({ operations, requests }).toEqual({ operations: ['GetItem', 'GetItem', 'Query'], requests: 3 });
  });

  it('fuses one of two first pages and reads the other beside it', async () => {
    const query = `query($userId: ID!) { user(userId: $userId) {
      a: orders(first: 2) { edges { cursor } pageInfo { hasNextPage } }
      b: orders(first: 7) { edges { cursor } pageInfo { hasNextPage } } } }`;
    const { operations, requests } = await both(query, { userId: buyer.userId });
    expect({ operations, requests }).toEqual({ operations: ['Query', 'Query'], requests: 2 });
  });

  it("serves the viewer's own orders the same way", async () => {
    const headers = { authorization: `Bearer ${await tokenFor(buyer.userId)}` };
    const { data, requests } = await both('{ viewer { userId orders(first: 3) { edges { cursor } } } }', {}, headers);
    expect(data.viewer.orders.edges).toHaveLength(3);
    expect(requests).toBe(1);
  });

  it("reads nothing of another user's partition for a customer", async () => {
    const headers = { authorization: `Bearer ${await tokenFor(fresh.userId)}` };
    const { data, requests } = await both(ONE_PAGE, { userId: buyer.userId, first: 3 }, headers);
    expect(data.user).toBeNull();
    expect(requests).toBe(0);
  });

  it('counts a prefetched page that is still in flight when its user turns out missing', async () => {
    // The user's GetItem answers null first; the response waits for the page's Query.
    const query = '{ user(userId: "nobody-at-all") { orders(last: 2) { nodes { orderId } } } }';
    for (let i = 0; i < 5; i++) {
      const { data, requests } = await both(query, {});
      expect(data.user).toBeNull();
      expect(requests).toBe(2);
    }
  });

  it('falls back to the ordinary page when the range holds an item that is not an order', async () => {
    const stranger = aUser();
    await store(fused.dynamo.doc, fused.tableName, { users: [stranger], orders: ordersOf(stranger, [product], 3) });
    // Sorts between ORDER# and PROFILE: the fused read cannot tell how many orders it holds.
    await fused.dynamo.doc.send(
      new PutCommand({ TableName: fused.tableName, Item: { PK: userPK(stranger.userId), SK: 'PAYMENT#1' } }),
    );
    const { data, operations } = await both(ONE_PAGE, { userId: stranger.userId, first: 2 });
    expect(data.user.orders.edges).toHaveLength(2);
    expect(data.user.orders.pageInfo.hasNextPage).toBe(true);
    expect(operations).toEqual(['Query', 'Query']);
  });
});
