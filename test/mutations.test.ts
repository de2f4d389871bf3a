import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderIdFor } from '../src/writes/placeOrder.js';
import { aProduct, aUser, store } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const ERRORS = 'userErrors { code field message }';
let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}-${Date.now().toString(36)}`;

const getItem = async (PK: string, SK: string) =>
  (await server.dynamo.doc.send(new GetCommand({ TableName: server.tableName, Key: { PK, SK }, ConsistentRead: true })))
    .Item;

const CREATE_USER = `mutation($input: CreateUserInput!) { createUser(input: $input) { user { userId email name version orders { totalCount } } ${ERRORS} } }`;
const UPDATE_USER = `mutation($input: UpdateUserInput!) { updateUser(input: $input) { user { userId email name version } ${ERRORS} } }`;
const CREATE_PRODUCT = `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { productId name category price { amount } stock version } ${ERRORS} } }`;
const UPDATE_PRODUCT = `mutation($input: UpdateProductInput!) { updateProduct(input: $input) { product { productId name category price { amount } stock version } ${ERRORS} } }`;
const PLACE_ORDER = `mutation($input: PlaceOrderInput!) { placeOrder(input: $input) {
  order { orderId status total { amount } items { productId quantity unitPrice { amount } product { stock } } user { orders(first: 5) { totalCount nodes { orderId } } } }
  replayed ${ERRORS} } }`;
const CANCEL_ORDER = `mutation($input: CancelOrderInput!) { cancelOrder(input: $input) { order { orderId status items { product { stock } } } ${ERRORS} } }`;
const UPDATE_STATUS = `mutation($input: UpdateOrderStatusInput!) { updateOrderStatus(input: $input) { order { orderId status } ${ERRORS} } }`;

/** A user and products stored directly; returns their ids. */
async function arrange(stocks: number[] = [10, 10]) {
  const user = aUser();
  const products = stocks.map((stock) => aProduct({ stock, priceCents: 1250 }));
  await store(server.dynamo.doc, server.tableName, { users: [user], products });
  return { user, products };
}

describe('createUser', () => {
  it('writes the profile and the email guard, lower-casing the email', async () => {
    const userId = unique('u');
    const response = await server.gql(CREATE_USER, {
      input: { userId, email: `  ${userId}@Example.COM `, name: 'Ann' },
    });
    expect(response.data?.createUser).toEqual({
      user: { userId, email: `${userId}@example.com`, name: 'Ann', version: 1, orders: { totalCount: 0 } },
      userErrors: [],
    });
    expect(await getItem(`EMAIL#${userId}@example.com`, 'UNIQUE')).toMatchObject({ userId });
    const byEmail = await server.gql('query($e: String!) { userByEmail(email: $e) { userId } }', {
      e: `${userId}@example.com`,
    });
    expect(byEmail.data?.userByEmail).toEqual({ userId });
  });

  it("takes the token's subject as the userId when none is given", async () => {
    const subject = unique('sub');
    const response = await server.gql(
      CREATE_USER,
      { input: { email: `${subject}@example.com`, name: 'Gen' } },
      { authorization: `Bearer ${await tokenFor(subject)}` },
    );
    expect(response.data?.createUser.userErrors).toEqual([]);
    expect(response.data?.createUser.user.userId).toBe(subject);
  });

  it('reports USER_EXISTS and EMAIL_TAKEN together and writes nothing', async () => {
    const userId = unique('u');
    await server.gql(CREATE_USER, { input: { userId, email: `${userId}@example.com`, name: 'First' } });
    const other = unique('other');
    const response = await server.gql(CREATE_USER, {
      input: { userId, email: `${userId}@example.com`, name: 'Second' },
    });
    expect(response.data?.createUser.user).toBeNull();
    expect(
      response.data?.createUser.userErrors.map((e: { code: string; field: string[] }) => [e.code, e.field]),
    ).toEqual([
      ['USER_EXISTS', ['userId']],
      ['EMAIL_TAKEN', ['email']],
    ]);
    const emailOnly = await server.gql(CREATE_USER, {
      input: { userId: other, email: `${userId}@example.com`, name: 'X' },
    });
    expect(emailOnly.data?.createUser.userErrors.map((e: { code: string }) => e.code)).toEqual(['EMAIL_TAKEN']);
    expect(await getItem(`USER#${other}`, 'PROFILE')).toBeUndefined();
    expect((await getItem(`USER#${userId}`, 'PROFILE'))?.name).toBe('First');
  });

  it.each([
    [{ userId: 'bad#id', email: 'ok@example.com', name: 'N' }, ['userId']],
    [{ email: 'not-an-email', name: 'N' }, ['email']],
    [{ email: 'ok2@example.com', name: '   ' }, ['name']],
    [{ email: 'ok3@example.com', name: 'x'.repeat(101) }, ['name']],
    [{ email: 'ok4@example.com', name: 'line\nbreak' }, ['name']],
  ])('refuses invalid input %j with INVALID_INPUT on the field', async (input, field) => {
    const response = await server.gql(CREATE_USER, { input });
    expect(response.data?.createUser.user).toBeNull();
    expect(response.data?.createUser.userErrors).toEqual([expect.objectContaining({ code: 'INVALID_INPUT', field })]);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(0);
  });
});

describe('updateUser', () => {
  it('renames with the current version and moves the version on', async () => {
    const { user } = await arrange();
    const response = await server.gql(UPDATE_USER, {
      input: { userId: user.userId, expectedVersion: 1, name: 'Renamed' },
    });
    expect(response.data?.updateUser).toEqual({
      user: { userId: user.userId, email: user.email, name: 'Renamed', version: 2 },
      userErrors: [],
    });
  });

  it('moves the email guard with an email change, in one transaction', async () => {
    const { user } = await arrange();
    const email = `${unique('moved')}@example.com`;
    const response = await server.gql(UPDATE_USER, { input: { userId: user.userId, expectedVersion: 1, email } });
    expect(response.data?.updateUser.user.email).toBe(email);
    expect(await getItem(`EMAIL#${email}`, 'UNIQUE')).toMatchObject({ userId: user.userId });
    expect(await getItem(`EMAIL#${user.email}`, 'UNIQUE')).toBeUndefined();
    const byEmail = await server.gql('query($e: String!) { userByEmail(email: $e) { userId } }', { e: email });
    expect(byEmail.data?.userByEmail).toEqual({ userId: user.userId });
  });

  it('refuses a stale expectedVersion with VERSION_CONFLICT', async () => {
    const { user } = await arrange();
    await server.gql(UPDATE_USER, { input: { userId: user.userId, expectedVersion: 1, name: 'One' } });
    const response = await server.gql(UPDATE_USER, { input: { userId: user.userId, expectedVersion: 1, name: 'Two' } });
    expect(response.data?.updateUser.userErrors).toEqual([
      expect.objectContaining({ code: 'VERSION_CONFLICT', field: ['expectedVersion'] }),
    ]);
    expect((await getItem(`USER#${user.userId}`, 'PROFILE'))?.name).toBe('One');
  });

  it('refuses an email another user holds with EMAIL_TAKEN, keeping both guards', async () => {
    const { user } = await arrange();
    const { user: other } = await arrange();
    const response = await server.gql(UPDATE_USER, {
      input: { userId: user.userId, expectedVersion: 1, email: other.email },
    });
    expect(response.data?.updateUser.userErrors).toEqual([
      expect.objectContaining({ code: 'EMAIL_TAKEN', field: ['email'] }),
    ]);
    expect(await getItem(`EMAIL#${user.email}`, 'UNIQUE')).toMatchObject({ userId: user.userId });
    expect(await getItem(`EMAIL#${other.email}`, 'UNIQUE')).toMatchObject({ userId: other.userId });
    expect((await getItem(`USER#${user.userId}`, 'PROFILE'))?.version).toBe(1);
  });

  it('reports NOT_FOUND for an unknown user', async () => {
    const response = await server.gql(UPDATE_USER, {
      input: { userId: unique('ghost'), expectedVersion: 1, name: 'X' },
    });
    expect(response.data?.updateUser.userErrors).toEqual([
      expect.objectContaining({ code: 'NOT_FOUND', field: ['userId'] }),
    ]);
  });
});

describe('createProduct and updateProduct', () => {
  it('creates a product with its price in cents and its category lower-cased', async () => {
    const productId = unique('p');
    const response = await server.gql(CREATE_PRODUCT, {
      input: { productId, name: 'Lamp', description: 'Bright.', category: 'Lighting', price: '19.9', stock: 7 },
    });
    expect(response.data?.createProduct).toEqual({
      product: { productId, name: 'Lamp', category: 'lighting', price: { amount: '19.90' }, stock: 7, version: 1 },
      userErrors: [],
    });
    expect(await getItem(`PRODUCT#${productId}`, 'DETAILS')).toMatchObject({
      price: 1990,
      GSI1PK: 'CATEGORY#lighting',
    });
  });

  it('refuses an existing productId with PRODUCT_EXISTS', async () => {
    const { products } = await arrange([1]);
    const response = await server.gql(CREATE_PRODUCT, {
      input: {
        productId: products[0]?.productId,
        name: 'Dup',
        description: '',
        category: 'x',
        price: '1.00',
        stock: 1,
      },
    });
    expect(response.data?.createProduct.userErrors).toEqual([
      expect.objectContaining({ code: 'PRODUCT_EXISTS', field: ['productId'] }),
    ]);
    expect((await getItem(`PRODUCT#${products[0]?.productId}`, 'DETAILS'))?.name).toBe(products[0]?.name);
  });

  it.each([
    ['price', '1.999'],
    ['price', '-1.00'],
    ['price', '1e3'],
    ['price', '1000000.01'],
    ['stock', -1],
    ['category', 'a#b'],
    ['name', ''],
  ])('refuses %s = %j with INVALID_INPUT', async (field, value) => {
    const input = { name: 'Ok', description: '', category: 'ok', price: '1.00', stock: 1, [field]: value };
    const response = await server.gql(CREATE_PRODUCT, { input });
    expect(response.data?.createProduct.userErrors).toEqual([
      expect.objectContaining({ code: 'INVALID_INPUT', field: [field] }),
    ]);
  });

  it('updates price and name, moving the product within its category listing', async () => {
    const { products } = await arrange([5]);
    const productId = products[0]?.productId;
    const response = await server.gql(UPDATE_PRODUCT, {
      input: { productId, expectedVersion: 1, name: 'AAA first', price: '2.50', category: 'renamed-cat' },
    });
    expect(response.data?.updateProduct.product).toMatchObject({
      name: 'AAA first',
      price: { amount: '2.50' },
      version: 2,
    });
    const listing = await server.gql('{ products(category: "renamed-cat") { nodes { productId } } }');
    expect(listing.data?.products.nodes).toEqual([{ productId }]);
  });

  it('tells NOT_FOUND from VERSION_CONFLICT', async () => {
    const { products } = await arrange([5]);
    const stale = await server.gql(UPDATE_PRODUCT, {
      input: { productId: products[0]?.productId, expectedVersion: 9, stock: 1 },
    });
    expect(stale.data?.updateProduct.userErrors).toEqual([
      expect.objectContaining({ code: 'VERSION_CONFLICT', field: ['expectedVersion'] }),
    ]);
    const missing = await server.gql(UPDATE_PRODUCT, {
      input: { productId: unique('none'), expectedVersion: 1, stock: 1 },
    });
    expect(missing.data?.updateProduct.userErrors).toEqual([
      expect.objectContaining({ code: 'NOT_FOUND', field: ['productId'] }),
    ]);
  });
});

describe('placeOrder', () => {
  it('takes stock, writes both order copies and counts the order, in one transaction', async () => {
    const { user, products } = await arrange([10, 4]);
    const response = await server.gql(PLACE_ORDER, {
      input: {
        userId: user.userId,
        idempotencyKey: 'k1',
        items: [
          { productId: products[0]?.productId, quantity: 3 },
          { productId: products[1]?.productId, quantity: 4 },
        ],
      },
    });
    const payload = response.data?.placeOrder;
    expect(payload.userErrors).toEqual([]);
    expect(payload.replayed).toBe(false);
    expect(payload.order).toMatchObject({
      orderId: orderIdFor(user.userId, 'k1'),
      status: 'PLACED',
      total: { amount: '87.50' },
      items: [
        { quantity: 3, unitPrice: { amount: '12.50' }, product: { stock: 7 } },
        { quantity: 4, unitPrice: { amount: '12.50' }, product: { stock: 0 } },
      ],
      user: { orders: { totalCount: 1, nodes: [{ orderId: orderIdFor(user.userId, 'k1') }] } },
    });
    // one consistent BatchGetItem, one TransactWriteItems, then reads for the payload's user and products
    expect(response.extensions?.cost?.dynamodb.requests).toBeLessThanOrEqual(4);
    const details = await getItem(`ORDER#${payload.order.orderId}`, 'DETAILS');
    expect(details).toMatchObject({ userId: user.userId, status: 'PLACED', total: 8750 });
    expect((await getItem(`USER#${user.userId}`, 'PROFILE'))?.orderCount).toBe(1);
  });

  it('returns the stored order for a repeated idempotencyKey and changes nothing', async () => {
    const { user, products } = await arrange([10]);
    const input = {
      userId: user.userId,
      idempotencyKey: 'again',
      items: [{ productId: products[0]?.productId, quantity: 2 }],
    };
    const first = await server.gql(PLACE_ORDER, { input });
    const second = await server.gql(PLACE_ORDER, { input });
    expect(second.data?.placeOrder.replayed).toBe(true);
    expect(second.data?.placeOrder.order.orderId).toBe(first.data?.placeOrder.order.orderId);
    expect(second.extensions?.cost?.dynamodb.writeCapacityUnits).toBe(0);
    expect((await getItem(`PRODUCT#${products[0]?.productId}`, 'DETAILS'))?.stock).toBe(8);
    expect((await getItem(`USER#${user.userId}`, 'PROFILE'))?.orderCount).toBe(1);
  });

  it('refuses the same idempotencyKey for a different order with IDEMPOTENCY_KEY_REUSED', async () => {
    const { user, products } = await arrange([10]);
    const line = { productId: products[0]?.productId, quantity: 1 };
    await server.gql(PLACE_ORDER, { input: { userId: user.userId, idempotencyKey: 'reuse', items: [line] } });
    const response = await server.gql(PLACE_ORDER, {
      input: { userId: user.userId, idempotencyKey: 'reuse', items: [{ ...line, quantity: 2 }] },
    });
    expect(response.data?.placeOrder.userErrors).toEqual([
      expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REUSED', field: ['idempotencyKey'] }),
    ]);
    expect((await getItem(`PRODUCT#${products[0]?.productId}`, 'DETAILS'))?.stock).toBe(9);
  });

  it('scopes idempotency keys to the user', async () => {
    const { user, products } = await arrange([10]);
    const { user: other } = await arrange([]);
    const items = [{ productId: products[0]?.productId, quantity: 1 }];
    const a = await server.gql(PLACE_ORDER, { input: { userId: user.userId, idempotencyKey: 'shared', items } });
    const b = await server.gql(PLACE_ORDER, { input: { userId: other.userId, idempotencyKey: 'shared', items } });
    expect(b.data?.placeOrder.replayed).toBe(false);
    expect(b.data?.placeOrder.order.orderId).not.toBe(a.data?.placeOrder.order.orderId);
  });

  it('maps each failure to its line: INSUFFICIENT_STOCK and NOT_FOUND, writing nothing', async () => {
    const { user, products } = await arrange([10, 1]);
    const response = await server.gql(PLACE_ORDER, {
      input: {
        userId: user.userId,
        idempotencyKey: 'fails',
        items: [
          { productId: products[0]?.productId, quantity: 1 },
          { productId: products[1]?.productId, quantity: 2 },
          { productId: unique('missing'), quantity: 1 },
        ],
      },
    });
    expect(response.data?.placeOrder.order).toBeNull();
    expect(
      response.data?.placeOrder.userErrors.map((e: { code: string; field: string[] }) => [e.code, e.field]),
    ).toEqual([
      ['INSUFFICIENT_STOCK', ['items', '1', 'quantity']],
      ['NOT_FOUND', ['items', '2', 'productId']],
    ]);
    expect((await getItem(`PRODUCT#${products[0]?.productId}`, 'DETAILS'))?.stock).toBe(10);
    expect(await getItem(`ORDER#${orderIdFor(user.userId, 'fails')}`, 'DETAILS')).toBeUndefined();
  });

  it('reports NOT_FOUND for an unknown user', async () => {
    const { products } = await arrange([10]);
    const response = await server.gql(PLACE_ORDER, {
      input: {
        userId: unique('ghost'),
        idempotencyKey: 'k',
        items: [{ productId: products[0]?.productId, quantity: 1 }],
      },
    });
    expect(response.data?.placeOrder.userErrors).toEqual([
      expect.objectContaining({ code: 'NOT_FOUND', field: ['userId'] }),
    ]);
    expect((await getItem(`PRODUCT#${products[0]?.productId}`, 'DETAILS'))?.stock).toBe(10);
  });

  it.each([
    ['no lines', [], ['items']],
    ['a zero quantity', [{ productId: 'p', quantity: 0 }], ['items', '0', 'quantity']],
    ['a quantity over 1000', [{ productId: 'p', quantity: 1001 }], ['items', '0', 'quantity']],
    ['a forged product id', [{ productId: 'p#DETAILS', quantity: 1 }], ['items', '0', 'productId']],
    [
      'one product twice',
      [
        { productId: 'p', quantity: 1 },
        { productId: 'p', quantity: 2 },
      ],
      ['items', '1', 'productId'],
    ],
    ['98 lines', Array.from({ length: 98 }, (_, i) => ({ productId: `p${i}`, quantity: 1 })), ['items']],
  ])('refuses %s with INVALID_INPUT before touching DynamoDB', async (_, items, field) => {
    const response = await server.gql(PLACE_ORDER, { input: { userId: 'someone', idempotencyKey: 'k', items } });
    expect(response.data?.placeOrder.userErrors).toEqual([expect.objectContaining({ code: 'INVALID_INPUT', field })]);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(0);
  });
});

describe('cancelOrder and updateOrderStatus', () => {
  async function placed(quantity = 2) {
    const { user, products } = await arrange([10]);
    const response = await server.gql(PLACE_ORDER, {
      input: {
        userId: user.userId,
        idempotencyKey: unique('k'),
        items: [{ productId: products[0]?.productId, quantity }],
      },
    });
    return { user, product: products[0], orderId: response.data?.placeOrder.order.orderId as string };
  }

  it('cancels a placed order, restoring stock and updating both copies', async () => {
    const { user, product, orderId } = await placed(3);
    const response = await server.gql(CANCEL_ORDER, { input: { orderId } });
    expect(response.data?.cancelOrder).toEqual({
      order: { orderId, status: 'CANCELLED', items: [{ product: { stock: 10 } }] },
      userErrors: [],
    });
    const orders = await server.gql(
      'query($u: ID!) { user(userId: $u) { orders { nodes { status } } cancelled: orders(status: CANCELLED) { nodes { orderId } } } }',
      { u: user.userId },
    );
    expect(orders.data?.user.orders.nodes).toEqual([{ status: 'CANCELLED' }]);
    expect(orders.data?.user.cancelled.nodes).toEqual([{ orderId }]);
    expect((await getItem(`PRODUCT#${product?.productId}`, 'DETAILS'))?.stock).toBe(10);
  });

  it('moves an order PLACED -> SHIPPED -> DELIVERED and refuses to go back or cancel', async () => {
    const { orderId } = await placed();
    const steps = [];
    for (const status of ['SHIPPED', 'DELIVERED', 'SHIPPED']) {
      steps.push((await server.gql(UPDATE_STATUS, { input: { orderId, status } })).data?.updateOrderStatus);
    }
    expect(steps.map((step) => step.order?.status ?? step.userErrors[0].code)).toEqual([
      'SHIPPED',
      'DELIVERED',
      'INVALID_STATUS',
    ]);
    expect(steps[2].userErrors[0].field).toEqual(['status']);
    const cancel = await server.gql(CANCEL_ORDER, { input: { orderId } });
    expect(cancel.data?.cancelOrder.userErrors).toEqual([
      expect.objectContaining({ code: 'INVALID_STATUS', field: ['orderId'] }),
    ]);
    expect((await getItem(`ORDER#${orderId}`, 'DETAILS'))?.status).toBe('DELIVERED');
  });

  it('refuses PLACED -> DELIVERED', async () => {
    const { orderId } = await placed();
    const response = await server.gql(UPDATE_STATUS, { input: { orderId, status: 'DELIVERED' } });
    expect(response.data?.updateOrderStatus.userErrors).toEqual([expect.objectContaining({ code: 'INVALID_STATUS' })]);
  });

  it('reports NOT_FOUND for an unknown order', async () => {
    const response = await server.gql(CANCEL_ORDER, { input: { orderId: unique('none') } });
    expect(response.data?.cancelOrder.userErrors).toEqual([
      expect.objectContaining({ code: 'NOT_FOUND', field: ['orderId'] }),
    ]);
  });
});
