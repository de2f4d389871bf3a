/**
 * The counters are kept in the same transactions as the writes that change them, so after
 * any mix of mutations, concurrent ones and refused ones included, each equals a recount of
 * the items: products per category, a user's orders per status, and the shop-wide status
 * views of GSI2 hold exactly the orders in that status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Item } from '../src/table/codecs.js';
import { orderShard, shopOrdersGSI2PK, statusCountAttribute, userPK } from '../src/table/keys.js';
import { ORDER_STATUSES } from '../src/table/models.js';
import type { OrderStatus } from '../src/table/models.js';
import { startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { CANCEL_ORDER, CREATE_USER, PLACE_ORDER, scanTable, UPDATE_ORDER_STATUS } from './support/writes.js';

const CREATE_PRODUCT = `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { productId version } userErrors { code } } }`;
const UPDATE_PRODUCT = `mutation($input: UpdateProductInput!) { updateProduct(input: $input) { product { productId category version } userErrors { code } } }`;

let server: TestServer;
const userIds = ['counted-ann', 'counted-ben', 'counted-cid'];
const productIds = Array.from({ length: 9 }, (_, i) => `counted-p${i}`);
const CATEGORIES = ['alpha', 'beta', 'gamma'];

beforeAll(async () => {
  server = await startTestServer();
  await Promise.all(
    userIds.map((userId) =>
      server.gql(CREATE_USER, { input: { userId, email: `${userId}@example.com`, name: userId } }),
    ),
  );
  // Concurrent creations into the same three counters.
  const created = await Promise.all(
    productIds.map((productId, i) =>
      server.gql(CREATE_PRODUCT, {
        input: { productId, name: `P ${i}`, description: '', category: CATEGORIES[i % 3], price: '1.00', stock: 50 },
      }),
    ),
  );
  expect(created.every((r) => r.data?.createProduct.userErrors.length === 0)).toBe(true);
  // A second creation of an existing product changes no counter.
  const again = await server.gql(CREATE_PRODUCT, {
    input: { productId: productIds[0], name: 'again', description: '', category: 'gamma', price: '1.00', stock: 1 },
  });
  expect(again.data?.createProduct.userErrors).toEqual([{ code: 'PRODUCT_EXISTS' }]);

  // Two racing moves of one product from the same version: one wins, one is refused.
  const race = await Promise.all(
    ['beta', 'gamma'].map((category) =>
      server.gql(UPDATE_PRODUCT, { input: { productId: productIds[0], expectedVersion: 1, category } }),
    ),
  );
  expect(race.map((r) => r.data?.updateProduct.userErrors.length).sort()).toEqual([0, 1]);
  await Promise.all([
    server.gql(UPDATE_PRODUCT, { input: { productId: productIds[1], expectedVersion: 1, category: 'delta' } }),
    server.gql(UPDATE_PRODUCT, { input: { productId: productIds[2], expectedVersion: 1, category: 'gamma' } }),
    server.gql(UPDATE_PRODUCT, { input: { productId: productIds[3], expectedVersion: 1, name: 'renamed only' } }),
  ]);

  const placed = await Promise.all(
    Array.from({ length: 18 }, (_, i) =>
      server.gql(PLACE_ORDER, {
        input: {
          userId: userIds[i % 3],
          items: [{ productId: productIds[4 + (i % 5)], quantity: 1 }],
          idempotencyKey: `k${i}`,
        },
      }),
    ),
  );
  const orderIds: string[] = placed.map((r) => r.data!.placeOrder.order.orderId);
  // A replay adds nothing to the counts.
  await server.gql(PLACE_ORDER, {
    input: { userId: userIds[0], items: [{ productId: productIds[4], quantity: 1 }], idempotencyKey: 'k0' },
  });
  // Concurrent status changes, two of them racing on one order (one must lose).
  await Promise.all([
    ...orderIds
      .slice(0, 6)
      .map((orderId) => server.gql(UPDATE_ORDER_STATUS, { input: { orderId, status: 'SHIPPED' } })),
    ...orderIds.slice(6, 10).map((orderId) => server.gql(CANCEL_ORDER, { input: { orderId } })),
    server.gql(CANCEL_ORDER, { input: { orderId: orderIds[0] } }),
  ]);
  await Promise.all(
    orderIds.slice(0, 3).map((orderId) => server.gql(UPDATE_ORDER_STATUS, { input: { orderId, status: 'DELIVERED' } })),
  );
});
afterAll(() => server.stop());

describe('after concurrent mutations', () => {
  let items: Item[];
  beforeAll(async () => {
    items = await scanTable(server.dynamo.doc, server.tableName);
  });

  it('each category counter equals the products in the category', async () => {
    const recount = new Map<string, number>();
    for (const item of items.filter((i) => i.entityType === 'Product')) {
      recount.set(String(item.category), (recount.get(String(item.category)) ?? 0) + 1);
    }
    const response = await server.gql('{ categories { name productCount } }');
    expect(response.data!.categories).toEqual(
      [...recount].sort().map(([name, productCount]) => ({ name, productCount })),
    );
    expect(recount.get('delta')).toBe(1);
  });

  it('each user’s per-status count equals the orders in that status, and totalCount says so', async () => {
    for (const userId of userIds) {
      const mine = items.filter((i) => i.entityType === 'UserOrder' && i.PK === userPK(userId));
      const profile = items.find((i) => i.entityType === 'User' && i.userId === userId)!;
      for (const status of ORDER_STATUSES) {
        const recount = mine.filter((i) => i.status === status).length;
        expect(profile[statusCountAttribute(status)]).toBe(recount);
        const response = await server.gql(
          `query($userId: ID!, $status: OrderStatus) { user(userId: $userId) { orders(status: $status, first: 1) { totalCount } } }`,
          { userId, status },
        );
        expect(response.data!.user.orders.totalCount).toBe(recount);
      }
      expect(profile.orderCount).toBe(mine.length);
    }
    const statuses = new Set(items.filter((i) => i.entityType === 'UserOrder').map((i) => i.status as OrderStatus));
    expect(statuses).toEqual(new Set(['PLACED', 'SHIPPED', 'DELIVERED', 'CANCELLED']));
  });

  it('puts each order in the shop-wide view of its current status, and every order in the all-orders view', () => {
    for (const copy of items.filter((i) => i.entityType === 'UserOrder')) {
      expect(copy.GSI2PK).toBe(shopOrdersGSI2PK(copy.status as OrderStatus, orderShard(String(copy.orderId))));
    }
    for (const details of items.filter((i) => i.entityType === 'Order')) {
      expect(details.GSI2PK).toBe(shopOrdersGSI2PK('ALL', orderShard(String(details.orderId))));
    }
  });
});
