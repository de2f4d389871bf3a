import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '../src/graphql/globalId.js';
import { demoItems } from '../src/seed/seed.js';
import { putItems } from '../src/db/batchWrite.js';
import { errorCodes, startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  await putItems(server.dynamo.doc, server.tableName, demoItems());
});
afterAll(() => server.stop());

const ISSUE_QUERY = `query AliceOrders($first: Int) {
  userByEmail(email: "alice@example.com") {
    orders(first: $first) { edges { node { user { name } items { quantity product { name price { amount } } } } } }
  }
}`;

describe('the read API over the demo data', () => {
  it('answers every root look-up by raw key', async () => {
    const response = await server.gql(`{
      user(userId: "alice") { userId email name orders(first: 1) { totalCount } }
      userByEmail(email: "Bob@Example.com") { userId }
      order(orderId: "demo-bob-001") { orderId status total { amount currencyCode } user { userId } }
      product(productId: "book-ddia") { productId name category price { amount currencyCode } stock }
      products(category: "electronics", first: 2) { nodes { productId } pageInfo { hasNextPage } }
    }`);
    expect(response.errors).toBeUndefined();
    expect(response.data).toMatchObject({
      user: { userId: 'alice', email: 'alice@example.com', name: 'Alice Example', orders: { totalCount: 30 } },
      userByEmail: { userId: 'bob' },
      order: { orderId: 'demo-bob-001', user: { userId: 'bob' }, total: { currencyCode: 'USD' } },
      product: { productId: 'book-ddia', category: 'books', price: { amount: '45.99', currencyCode: 'USD' } },
      products: { pageInfo: { hasNextPage: true } },
    });
    expect(response.data?.products.nodes).toHaveLength(2);
  });

  it('returns null for ids that do not exist', async () => {
    const response = await server.gql(`{
      user(userId: "nobody") { userId }
      userByEmail(email: "nobody@example.com") { userId }
      order(orderId: "no-such-order") { orderId }
      product(productId: "no-such-product") { productId }
      node(id: "${toGlobalId('Product', 'missing')}") { id }
      nodes(ids: ["${toGlobalId('User', 'alice')}", "${toGlobalId('Order', 'missing')}"]) { id }
      products(category: "no-such-category") { nodes { productId } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
    }`);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      user: null,
      userByEmail: null,
      order: null,
      product: null,
      node: null,
      nodes: [{ id: toGlobalId('User', 'alice') }, null],
      products: {
        nodes: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      },
    });
  });

  it.each([
    ['user(userId: "alice#PROFILE") { userId }', 'userId'],
    ['order(orderId: "x\\u0000y") { orderId }', 'orderId'],
    [`product(productId: "${'p'.repeat(65)}") { productId }`, 'productId'],
    ['userByEmail(email: "not-an-email") { userId }', 'email'],
    ['node(id: "not a global id") { id }', 'id'],
    [`node(id: "${Buffer.from('Secret:alice').toString('base64url')}") { id }`, 'id'],
    [`node(id: "${Buffer.from('User:alice#PROFILE').toString('base64url')}") { id }`, 'id'],
    ['products(category: "CATEGORY#x") { nodes { productId } }', 'category'],
  ])('refuses a malformed id with BAD_USER_INPUT: %s', async (field, argumentName) => {
    const response = await server.gql(`{ ${field} }`);
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors?.[0]?.extensions?.argumentName).toBe(argumentName);
    expect(response.errors?.[0]?.message).toMatch(argumentName);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(0);
  });

  it('resolves nodes of every type in one BatchGetItem', async () => {
    const ids = [
      toGlobalId('User', 'alice'),
      toGlobalId('Order', 'demo-alice-001'),
      toGlobalId('Product', 'tent-2p'),
      toGlobalId('User', 'bob'),
    ];
    const response = await server.gql(
      `query($ids: [ID!]!) { nodes(ids: $ids) { id __typename ... on User { userId } ... on Order { orderId } ... on Product { productId } } }`,
      { ids },
    );
    expect(response.data?.nodes.map((node: { __typename: string }) => node.__typename)).toEqual([
      'User',
      'Order',
      'Product',
      'User',
    ]);
    expect(response.data?.nodes.map((node: { id: string }) => node.id)).toEqual(ids);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(1);
  });

  it.each([1, 5, 20, 30])(
    'costs at most 3 DynamoDB requests for a user, %i orders, their users and products',
    async (first) => {
      const response = await server.gql(ISSUE_QUERY, { first });
      expect(response.errors).toBeUndefined();
      const edges = response.data?.userByEmail.orders.edges as { node: { user: { name: string }; items: unknown[] } }[];
      expect(edges).toHaveLength(first);
      expect(edges.every((edge) => edge.node.user.name === 'Alice Example' && edge.node.items.length > 0)).toBe(true);
      expect(response.extensions?.cost?.dynamodb.requests).toBe(3);
      expect(response.extensions?.cost?.dynamodb.readCapacityUnits).toBeGreaterThan(0);
    },
  );

  it('reads an order with its user and its products in one batch after the order', async () => {
    const response = await server.gql(
      '{ order(orderId: "demo-alice-010") { user { name } items { product { name } } } }',
    );
    expect(response.errors).toBeUndefined();
    expect(response.extensions?.cost?.dynamodb.requests).toBe(2);
  });

  it('refuses more than 100 ids in nodes', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => toGlobalId('Product', `p${i}`));
    const response = await server.gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids });
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
  });
});
