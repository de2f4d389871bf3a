/**
 * What a write does when its transaction does not commit: TransactionConflict is retried a
 * bounded number of times, then answered with CONFLICT; a write refused by a condition or by
 * retries running out leaves the table exactly as it was.
 *
 * DynamoDB Local runs transactions one at a time and never reports TransactionConflict, so a
 * middleware on the server's client injects it (docs/design.md, "Pitfalls").
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Item } from '../src/table/codecs.js';
import { anOrder, aProduct, aUser, store } from './support/factories.js';
import { injectTransactionConflicts } from './support/faults.js';
import type { ConflictInjection } from './support/faults.js';
import { errorCodes, startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { CANCEL_ORDER, getItem, PLACE_ORDER, scanTable, stockOf } from './support/writes.js';
import type { OrderChangeResult, PlaceOrderResult } from './support/writes.js';

/** What the injecting middleware does; reset before every test. */
const injection: ConflictInjection = { conflictsLeft: 0, conflictingAction: 0, sent: [], beforeSend: undefined };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ configureClient: injectTransactionConflicts(injection) });
});
afterAll(() => server.stop());
beforeEach(() => {
  injection.conflictsLeft = 0;
  injection.conflictingAction = 0;
  injection.sent = [];
  injection.beforeSend = undefined;
});

const placeOrder = (input: {
  userId: string;
  items: { productId: string; quantity: number }[];
  idempotencyKey: string;
}) => server.gql<{ placeOrder: PlaceOrderResult }>(PLACE_ORDER, { input });

const snapshot = (): Promise<Item[]> => scanTable(server.dynamo.doc, server.tableName);

/** A user and three products with stock 10, stored directly. */
async function arrange() {
  const user = aUser();
  const products = [aProduct({ stock: 10 }), aProduct({ stock: 10 }), aProduct({ stock: 10 })];
  await store(server.dynamo.doc, server.tableName, { users: [user], products });
  return { user, products };
}

const oneLineOrder = (userId: string, productId: string) => ({
  userId,
  items: [{ productId, quantity: 2 }],
  idempotencyKey: `key-${userId}`,
});

describe('a placeOrder whose transaction conflicts twice', () => {
  it('succeeds and writes the order once', async () => {
    const { user, products } = await arrange();
    const productId = products[0]?.productId as string;
    injection.conflictsLeft = 2;
    const response = await placeOrder(oneLineOrder(user.userId, productId));
    expect(response.errors).toBeUndefined();
    const result = response.data?.placeOrder;
    expect(result?.userErrors).toEqual([]);
    expect(result?.replayed).toBe(false);
    const orderId = result?.order?.orderId as string;
    const orders = (await snapshot()).filter((item) => item.orderId === orderId);
    expect(orders.map((item) => item.entityType).sort()).toEqual(['Order', 'UserOrder']);
    expect(await stockOf(server.dynamo.doc, server.tableName, productId)).toBe(8);
    expect(
      (await getItem(server.dynamo.doc, server.tableName, { PK: `USER#${user.userId}`, SK: 'PROFILE' }))?.orderCount,
    ).toBe(1);
  });

  it('reports every attempt in extensions.cost.dynamodb.requests', async () => {
    const { user, products } = await arrange();
    injection.conflictsLeft = 2;
    const response = await placeOrder(oneLineOrder(user.userId, products[0]?.productId as string));
    expect(response.data?.placeOrder.order).not.toBeNull();
    expect(injection.sent).toHaveLength(3);
    // One BatchGetItem (replay check, user, products), then three TransactWriteItems.
    expect(response.extensions?.cost?.dynamodb.requests).toBe(4);
  });

  it('sends the very same transaction on every attempt, ClientRequestToken included', async () => {
    const { user, products } = await arrange();
    injection.conflictsLeft = 2;
    await placeOrder(oneLineOrder(user.userId, products[0]?.productId as string));
    expect(injection.sent).toHaveLength(3);
    expect(injection.sent[0]?.ClientRequestToken).toEqual(expect.any(String));
    expect(injection.sent[1]).toEqual(injection.sent[0]);
    expect(injection.sent[2]).toEqual(injection.sent[0]);
  });
});

describe('a placeOrder whose transaction conflicts on every attempt', () => {
  it('answers with a CONFLICT error that says to retry and leaks no internals', async () => {
    const { user, products } = await arrange();
    injection.conflictsLeft = Number.POSITIVE_INFINITY;
    const response = await placeOrder(oneLineOrder(user.userId, products[0]?.productId as string));
    expect(errorCodes(response)).toEqual(['CONFLICT']);
    expect(response.errors?.[0]?.path).toEqual(['placeOrder']);
    const message = response.errors?.[0]?.message ?? '';
    expect(message).toMatch(/conflict/i);
    expect(message).toMatch(/changed nothing/i);
    expect(message).toMatch(/retry/i);
    expect(message).not.toContain(server.tableName);
    expect(message).not.toMatch(/TransactionCanceled|Transaction cancelled/);
    expect(response.errors?.[0]?.extensions).not.toHaveProperty('stacktrace');
  });

  it('gives up after a bounded number of attempts', async () => {
    const { user, products } = await arrange();
    injection.conflictsLeft = Number.POSITIVE_INFINITY;
    const response = await placeOrder(oneLineOrder(user.userId, products[0]?.productId as string));
    expect(errorCodes(response)).toEqual(['CONFLICT']);
    expect(injection.sent.length).toBeGreaterThan(1);
    expect(injection.sent.length).toBeLessThanOrEqual(10);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(1 + injection.sent.length);
  });

  it('leaves the table exactly as it was', async () => {
    const { user, products } = await arrange();
    const before = await snapshot();
    injection.conflictsLeft = Number.POSITIVE_INFINITY;
    const response = await placeOrder({
      userId: user.userId,
      items: products.map((product) => ({ productId: product.productId, quantity: 1 })),
      idempotencyKey: 'always-conflicts',
    });
    expect(errorCodes(response)).toEqual(['CONFLICT']);
    expect(await snapshot()).toEqual(before);
  });

  it('places the order when the client retries after the conflicts stop', async () => {
    const { user, products } = await arrange();
    const input = oneLineOrder(user.userId, products[0]?.productId as string);
    injection.conflictsLeft = Number.POSITIVE_INFINITY;
    expect(errorCodes(await placeOrder(input))).toEqual(['CONFLICT']);
    injection.conflictsLeft = 0;
    const retried = await placeOrder(input);
    expect(retried.data?.placeOrder).toMatchObject({ replayed: false, userErrors: [] });
    expect(await stockOf(server.dynamo.doc, server.tableName, products[0]?.productId as string)).toBe(8);
  });
});

describe('a cancelOrder whose transaction conflicts', () => {
  it('is retried and restores the stock once', async () => {
    const user = aUser();
    const product = aProduct({ stock: 5 });
    const order = anOrder(user, [product]);
    await store(server.dynamo.doc, server.tableName, { users: [user], products: [product], orders: [order] });
    injection.conflictsLeft = 2;
    injection.conflictingAction = 1;
    const response = await server.gql<{ cancelOrder: OrderChangeResult }>(CANCEL_ORDER, {
      input: { orderId: order.orderId },
    });
    expect(response.errors).toBeUndefined();
    expect(response.data?.cancelOrder).toEqual({
      order: { orderId: order.orderId, status: 'CANCELLED' },
      userErrors: [],
    });
    expect(injection.sent).toHaveLength(3);
    expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(6);
  });
});

describe('a placeOrder refused for INSUFFICIENT_STOCK on line 2 of 3', () => {
  it('names items.1.quantity and leaves the table exactly as it was, when the read sees the shortage', async () => {
    const { user, products } = await arrange();
    const before = await snapshot();
    const response = await placeOrder({
      userId: user.userId,
      items: products.map((product, i) => ({ productId: product.productId, quantity: i === 1 ? 11 : 1 })),
      idempotencyKey: 'short-on-line-2',
    });
    expect(response.errors).toBeUndefined();
    expect(response.data?.placeOrder).toEqual({
      order: null,
      replayed: false,
      userErrors: [{ code: 'INSUFFICIENT_STOCK', field: ['items', '1', 'quantity'], message: 'Only 10 in stock' }],
    });
    expect(await snapshot()).toEqual(before);
  });

  it('names items.1.quantity and leaves the table exactly as it was, when the transaction finds the shortage', async () => {
    const { user, products } = await arrange();
    const contested = products[1]?.productId as string;
    let before: Item[] = [];
    // Between placeOrder's read and its transaction, someone else buys all but one unit.
    injection.beforeSend = async () => {
      injection.beforeSend = undefined;
      await server.dynamo.doc.send(
        new UpdateCommand({
          TableName: server.tableName,
          Key: { PK: `PRODUCT#${contested}`, SK: 'DETAILS' },
          UpdateExpression: 'SET stock = :one',
          ExpressionAttributeValues: { ':one': 1 },
        }),
      );
      before = await snapshot();
    };
    const response = await placeOrder({
      userId: user.userId,
      items: products.map((product) => ({ productId: product.productId, quantity: 2 })),
      idempotencyKey: 'short-in-transaction',
    });
    expect(injection.sent).toHaveLength(1);
    expect(response.errors).toBeUndefined();
    expect(response.data?.placeOrder).toEqual({
      order: null,
      replayed: false,
      userErrors: [{ code: 'INSUFFICIENT_STOCK', field: ['items', '1', 'quantity'], message: 'Only 1 in stock' }],
    });
    expect(before.length).toBeGreaterThan(0);
    expect(await snapshot()).toEqual(before);
  });
});
