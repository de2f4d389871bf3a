/**
 * Authorization under attack, over HTTP: a signed-in customer trying to read or change another
 * customer's data through every path the schema offers (root look-ups, nodes, connections,
 * cursors, nested fields, mutations), and anonymous callers trying what needs a token.
 * Another customer's data must read exactly like data that does not exist, and no refused
 * request may change the table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGlobalId } from '../src/graphql/globalId.js';
import type { Item } from '../src/table/codecs.js';
import type { OrderModel } from '../src/table/models.js';
import { aProduct, aUser, ordersOf, store } from './support/factories.js';
import { errorCodes, startTestServer, tokenFor } from './support/harness.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';
import { scanTable } from './support/writes.js';

const me = aUser();
const other = aUser();
const [tent, lamp] = [aProduct({ category: 'camping' }), aProduct({ category: 'camping' })] as const;
const myOrders = ordersOf(me, [tent], 3);
const otherOrders = ordersOf(other, [tent, lamp], 3);
const [myOrder, myOtherOrder] = myOrders as [OrderModel, OrderModel];
const [theirOrder, theirOtherOrder] = otherOrders as [OrderModel, OrderModel];

let server: TestServer;
const as: { me: Record<string, string>; anonymous: Record<string, string> } = {
  me: {},
  anonymous: { authorization: '' },
};
beforeAll(async () => {
  server = await startTestServer();
  as.me = { authorization: `Bearer ${await tokenFor(me.userId)}` };
  await store(server.dynamo.doc, server.tableName, {
    users: [me, other],
    products: [tent, lamp],
    orders: [...myOrders, ...otherOrders],
  });
});
afterAll(() => server.stop());

const snapshot = () => scanTable(server.dynamo.doc, server.tableName);

/** What a client can observe of a response: status, data, errors and how many DynamoDB requests it cost. */
const observable = (response: GraphQLResponse) => ({
  status: response.status,
  data: response.data,
  errors: response.errors,
  requests: response.extensions?.cost?.dynamodb.requests,
});

/** What identifies the other customer or their orders. */
const THEIR_SECRETS = [other.userId, other.email, other.name, ...otherOrders.map((order) => order.orderId)];
const mentionsTheOther = (response: GraphQLResponse) =>
  THEIR_SECRETS.some((secret) => JSON.stringify(response).includes(secret));

/** Fails if anything that identifies the other customer or their orders appears in `response`. */
function expectNothingOfTheOther(response: GraphQLResponse): void {
  const text = JSON.stringify(response);
  for (const secret of THEIR_SECRETS) expect(text).not.toContain(secret);
}

interface Owner {
  userId: string;
  email: string;
  orderId: string;
}
const MINE: Owner = { userId: me.userId, email: me.email, orderId: myOrder.orderId };
const THEIRS: Owner = { userId: other.userId, email: other.email, orderId: theirOrder.orderId };
const NOBODY: Owner = { userId: 'no-such-user', email: 'no-such-user@example.com', orderId: 'no-such-order' };

/** Every read path to a user or an order: [path, document, the variable for a given owner]. */
const READ_PATHS: [string, string, (owner: Owner) => unknown][] = [
  ['user(userId)', 'query($v: ID!) { user(userId: $v) { userId email name } }', (o) => o.userId],
  ['userByEmail(email)', 'query($v: String!) { userByEmail(email: $v) { userId email } }', (o) => o.email],
  [
    'userByEmail(email) in capitals',
    'query($v: String!) { userByEmail(email: $v) { userId } }',
    (o) => o.email.toUpperCase(),
  ],
  ['order(orderId)', 'query($v: ID!) { order(orderId: $v) { orderId total { amount } } }', (o) => o.orderId],
  ['order(orderId) { user }', 'query($v: ID!) { order(orderId: $v) { user { userId email } } }', (o) => o.orderId],
  [
    'user(userId) { orders }',
    'query($v: ID!) { user(userId: $v) { orders(first: 5) { totalCount nodes { orderId } } } }',
    (o) => o.userId,
  ],
  [
    'user(userId) { orders(status) }',
    'query($v: ID!) { user(userId: $v) { orders(status: PLACED) { edges { cursor node { orderId } } } } }',
    (o) => o.userId,
  ],
  [
    'node(id) of a User',
    'query($v: ID!) { node(id: $v) { id ... on User { email } } }',
    (o) => toGlobalId('User', o.userId),
  ],
  [
    'node(id) of an Order',
    'query($v: ID!) { node(id: $v) { id ... on Order { orderId user { userId } } } }',
    (o) => toGlobalId('Order', o.orderId),
  ],
  [
    'nodes(ids) of a User and an Order',
    'query($v: [ID!]!) { nodes(ids: $v) { id ... on User { email } ... on Order { orderId } } }',
    (o) => [toGlobalId('User', o.userId), toGlobalId('Order', o.orderId)],
  ],
];

const rootValues = (response: GraphQLResponse) => Object.values(response.data ?? {});

describe("a customer reading another customer's data", () => {
  let before: Item[];
  beforeAll(async () => {
    before = await snapshot();
  });

  it.each(READ_PATHS)('%s: the data exists (an admin reads it)', async (_, query, variable) => {
    const response = await server.gql(query, { v: variable(THEIRS) });
    expect(response.errors).toBeUndefined();
    expect(mentionsTheOther(response)).toBe(true);
    expect(rootValues(response).flat()).not.toContain(null);
  });

  it.each(READ_PATHS)('%s: the customer reads their own', async (_, query, variable) => {
    const response = await server.gql(query, { v: variable(MINE) }, as.me);
    expect(response.errors).toBeUndefined();
    expect(rootValues(response).flat()).not.toContain(null);
  });

  it.each(READ_PATHS)(
    "%s: another customer's data reads exactly like data that does not exist",
    async (_, query, variable) => {
      const theirs = await server.gql(query, { v: variable(THEIRS) }, as.me);
      const missing = await server.gql(query, { v: variable(NOBODY) }, as.me);
      expect(theirs.status).toBe(200);
      expect(theirs.errors).toBeUndefined();
      expect(
        rootValues(theirs)
          .flat()
          .every((value) => value === null),
      ).toBe(true);
      expect(observable(theirs)).toEqual(observable(missing));
      expectNothingOfTheOther(theirs);
    },
  );

  it.each(READ_PATHS)('%s: without a token is UNAUTHENTICATED', async (_, query, variable) => {
    const response = await server.gql(query, { v: variable(THEIRS) }, as.anonymous);
    expect(errorCodes(response)).toEqual(['UNAUTHENTICATED']);
    expectNothingOfTheOther(response);
  });

  it('viewer is the customer, with their own orders only', async () => {
    const response = await server.gql(
      '{ viewer { userId orders(first: 100) { totalCount nodes { orderId user { userId } } } } }',
      {},
      as.me,
    );
    expect(response.errors).toBeUndefined();
    expect(response.data?.viewer.userId).toBe(me.userId);
    expect(response.data?.viewer.orders.totalCount).toBe(myOrders.length);
    const orders = response.data?.viewer.orders.nodes as { orderId: string; user: { userId: string } }[];
    expect(orders.map((order) => order.orderId).sort()).toEqual(myOrders.map((order) => order.orderId).sort());
    expect(new Set(orders.map((order) => order.user.userId))).toEqual(new Set([me.userId]));
  });

  it('viewer of a token whose user does not exist is null', async () => {
    const response = await server.gql(
      '{ viewer { userId } }',
      {},
      { authorization: `Bearer ${await tokenFor('no-such-user')}` },
    );
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ viewer: null });
  });

  it('nodes mixing own, foreign and public ids returns only own and public', async () => {
    const ids = [
      toGlobalId('User', me.userId),
      toGlobalId('User', other.userId),
      toGlobalId('Order', myOrder.orderId),
      toGlobalId('Order', theirOrder.orderId),
      toGlobalId('Product', tent.productId),
    ];
    const response = await server.gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids }, as.me);
    expect(response.errors).toBeUndefined();
    expect(response.data?.nodes).toEqual([{ id: ids[0] }, null, { id: ids[2] }, null, { id: ids[4] }]);
  });

  describe("with a cursor taken from the other customer's connection", () => {
    let theirCursor: string;
    let myCursor: string;
    beforeAll(async () => {
      const query = 'query($v: ID!) { user(userId: $v) { orders(first: 1) { edges { cursor } } } }';
      theirCursor = (await server.gql(query, { v: other.userId })).data?.user.orders.edges[0].cursor;
      myCursor = (await server.gql(query, { v: me.userId }, as.me)).data?.user.orders.edges[0].cursor;
    });

    it('the customer pages their own connection with their own cursor', async () => {
      const response = await server.gql(
        'query($c: String) { viewer { orders(first: 5, after: $c) { nodes { orderId } } } }',
        { c: myCursor },
        as.me,
      );
      expect(response.errors).toBeUndefined();
      expect(response.data?.viewer.orders.nodes).toHaveLength(myOrders.length - 1);
    });

    it.each([
      [
        'user(userId) { orders(after) }',
        'query($c: String, $u: ID!) { user(userId: $u) { orders(first: 2, after: $c) { nodes { orderId } } } }',
      ],
      [
        'viewer { orders(after) }',
        'query($c: String) { viewer { orders(first: 2, after: $c) { nodes { orderId } } } }',
      ],
      [
        'viewer { orders(before) }',
        'query($c: String) { viewer { orders(last: 2, before: $c) { nodes { orderId } } } }',
      ],
      [
        'viewer { orders(status, after) }',
        'query($c: String) { viewer { orders(first: 2, after: $c, status: PLACED) { nodes { orderId } } } }',
      ],
    ])('%s on their own connection is BAD_USER_INPUT', async (_, query) => {
      const response = await server.gql(query, { c: theirCursor, u: me.userId }, as.me);
      expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
      expectNothingOfTheOther(response);
    });

    it("on the other customer's connection reads as a user that does not exist", async () => {
      const query =
        'query($c: String, $u: ID!) { user(userId: $u) { orders(first: 2, after: $c) { nodes { orderId } } } }';
      const theirs = await server.gql(query, { c: theirCursor, u: other.userId }, as.me);
      const missing = await server.gql(query, { c: theirCursor, u: NOBODY.userId }, as.me);
      expect(theirs.data).toEqual({ user: null });
      expect(observable(theirs)).toEqual(observable(missing));
    });
  });

  it('changed nothing in the table', async () => {
    expect(await snapshot()).toEqual(before);
  });
});

const PAYLOAD = '{ __typename }';
const CANCEL = `mutation($input: CancelOrderInput!) { cancelOrder(input: $input) { order { orderId status } userErrors { code field message } } }`;

/** [what, mutation field, input, who asks, the GraphQL error code]; inputs are valid, only the caller is wrong. */
const REFUSED_MUTATIONS: [string, string, string, Record<string, unknown>, keyof typeof as, string][] = [
  [
    "createUser naming a userId other than the token's subject",
    'createUser',
    'CreateUserInput',
    { userId: 'future-idp-user', email: 'future-idp-user@example.com', name: 'Squatter' },
    'me',
    'FORBIDDEN',
  ],
  [
    'createUser without a token, naming a free userId',
    'createUser',
    'CreateUserInput',
    { userId: 'squatted-user', email: 'squatted@example.com', name: 'Squatter' },
    'anonymous',
    'UNAUTHENTICATED',
  ],
  [
    'createUser without a token, with the email of another customer',
    'createUser',
    'CreateUserInput',
    { email: other.email.toUpperCase(), name: 'X' },
    'anonymous',
    'UNAUTHENTICATED',
  ],
  [
    'placeOrder for another customer',
    'placeOrder',
    'PlaceOrderInput',
    { userId: other.userId, items: [{ productId: tent.productId, quantity: 1 }], idempotencyKey: 'hostile-1' },
    'me',
    'FORBIDDEN',
  ],
  [
    'updateUser of another customer',
    'updateUser',
    'UpdateUserInput',
    { userId: other.userId, expectedVersion: 1, name: 'Taken Over', email: 'attacker@example.com' },
    'me',
    'FORBIDDEN',
  ],
  [
    'createProduct as a customer',
    'createProduct',
    'CreateProductInput',
    { productId: 'hostile-product', name: 'X', description: 'x', category: 'camping', price: '0.01', stock: 1 },
    'me',
    'FORBIDDEN',
  ],
  [
    'updateProduct as a customer',
    'updateProduct',
    'UpdateProductInput',
    { productId: lamp.productId, expectedVersion: 1, price: '0.01' },
    'me',
    'FORBIDDEN',
  ],
  [
    "updateOrderStatus of another's order as a customer",
    'updateOrderStatus',
    'UpdateOrderStatusInput',
    { orderId: theirOtherOrder.orderId, status: 'SHIPPED' },
    'me',
    'FORBIDDEN',
  ],
  [
    'updateOrderStatus of their own order as a customer',
    'updateOrderStatus',
    'UpdateOrderStatusInput',
    { orderId: myOtherOrder.orderId, status: 'SHIPPED' },
    'me',
    'FORBIDDEN',
  ],
  [
    'placeOrder without a token',
    'placeOrder',
    'PlaceOrderInput',
    { userId: other.userId, items: [{ productId: tent.productId, quantity: 1 }], idempotencyKey: 'hostile-2' },
    'anonymous',
    'UNAUTHENTICATED',
  ],
  [
    'updateUser without a token',
    'updateUser',
    'UpdateUserInput',
    { userId: other.userId, expectedVersion: 1, name: 'Taken Over' },
    'anonymous',
    'UNAUTHENTICATED',
  ],
  [
    'cancelOrder without a token',
    'cancelOrder',
    'CancelOrderInput',
    { orderId: theirOrder.orderId },
    'anonymous',
    'UNAUTHENTICATED',
  ],
  [
    'createProduct without a token',
    'createProduct',
    'CreateProductInput',
    { productId: 'hostile-product', name: 'X', description: 'x', category: 'camping', price: '0.01', stock: 1 },
    'anonymous',
    'UNAUTHENTICATED',
  ],
  [
    'updateProduct without a token',
    'updateProduct',
    'UpdateProductInput',
    { productId: tent.productId, expectedVersion: 1, price: '0.01' },
    'anonymous',
    'UNAUTHENTICATED',
  ],
  [
    'updateOrderStatus without a token',
    'updateOrderStatus',
    'UpdateOrderStatusInput',
    { orderId: theirOtherOrder.orderId, status: 'SHIPPED' },
    'anonymous',
    'UNAUTHENTICATED',
  ],
];

const mutation = (field: string, inputType: string) =>
  `mutation($input: ${inputType}!) { ${field}(input: $input) ${PAYLOAD} }`;

describe('a customer or an anonymous caller changing what is not theirs', () => {
  let before: Item[];
  beforeAll(async () => {
    before = await snapshot();
  });

  it.each(REFUSED_MUTATIONS)('%s is refused', async (_, field, inputType, input, who, code) => {
    const response = await server.gql(mutation(field, inputType), { input }, as[who]);
    expect(response.status).toBe(200);
    expect(errorCodes(response)).toEqual([code]);
    expect(response.data).toBeNull();
    expect(response.extensions?.cost?.dynamodb.requests).toBe(0);
  });

  it("cancelOrder of another customer's order answers exactly like an order that does not exist", async () => {
    const theirs = await server.gql(CANCEL, { input: { orderId: theirOrder.orderId } }, as.me);
    const missing = await server.gql(CANCEL, { input: { orderId: NOBODY.orderId } }, as.me);
    expect(theirs.data?.cancelOrder).toEqual({
      order: null,
      userErrors: [{ code: 'NOT_FOUND', field: ['orderId'], message: expect.any(String) }],
    });
    const withoutIds = (response: GraphQLResponse) =>
      JSON.parse(
        JSON.stringify(observable(response))
          .replaceAll(theirOrder.orderId, '<orderId>')
          .replaceAll(NOBODY.orderId, '<orderId>'),
      ) as unknown;
    expect(withoutIds(theirs)).toEqual(withoutIds(missing));
  });

  it('changed nothing in the table', async () => {
    expect(await snapshot()).toEqual(before);
  });
});

describe('what is open to everyone', () => {
  it('reads the product catalog without a token, on every path', async () => {
    const response = await server.gql(
      `query($p: ID!, $g: ID!) {
        product(productId: $p) { productId }
        products(category: "camping", first: 10) { nodes { productId } }
        node(id: $g) { ... on Product { productId } }
        nodes(ids: [$g]) { ... on Product { productId } }
      }`,
      { p: tent.productId, g: toGlobalId('Product', lamp.productId) },
      as.anonymous,
    );
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      product: { productId: tent.productId },
      products: { nodes: expect.arrayContaining([{ productId: tent.productId }, { productId: lamp.productId }]) },
      node: { productId: lamp.productId },
      nodes: [{ productId: lamp.productId }],
    });
  });
});

describe('the refused mutations are real ones', () => {
  it.each(REFUSED_MUTATIONS.filter(([, , , , who]) => who === 'me'))(
    '%s succeeds for an admin',
    async (_, field, inputType, input) => {
      const response = await server.gql(
        `mutation($input: ${inputType}!) { ${field}(input: $input) { userErrors { code message } } }`,
        { input },
      );
      expect(response.errors).toBeUndefined();
      expect(response.data?.[field]).toEqual({ userErrors: [] });
    },
  );

  it('a customer cancels their own order', async () => {
    const response = await server.gql(CANCEL, { input: { orderId: myOrder.orderId } }, as.me);
    expect(response.data?.cancelOrder).toEqual({
      order: { orderId: myOrder.orderId, status: 'CANCELLED' },
      userErrors: [],
    });
  });

  it('a customer places an order and edits their profile for themselves', async () => {
    const response = await server.gql(
      `mutation($order: PlaceOrderInput!, $profile: UpdateUserInput!) {
        placeOrder(input: $order) { order { user { userId } } userErrors { code } }
        updateUser(input: $profile) { user { name } userErrors { code } }
      }`,
      {
        order: { userId: me.userId, items: [{ productId: lamp.productId, quantity: 1 }], idempotencyKey: 'own-1' },
        profile: { userId: me.userId, expectedVersion: 1, name: 'Renamed Me' },
      },
      as.me,
    );
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      placeOrder: { order: { user: { userId: me.userId } }, userErrors: [] },
      updateUser: { user: { name: 'Renamed Me' }, userErrors: [] },
    });
  });
});
