/**
 * Small factories for arranging data directly in the table (writes through the API come with
 * the mutations). Each takes overrides; ids are unique unless given.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putItems } from '../../src/db/batchWrite.js';
import { EntityType, orderToDetailsItem, orderToUserItem, productToItem, userToItem } from '../../src/table/codecs.js';
import { emailGuardKey } from '../../src/table/keys.js';
import type { OrderModel, ProductModel, UserModel } from '../../src/table/models.js';

const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const NOW = '2026-06-01T12:00:00.000Z';

export function aUser(overrides: Partial<UserModel> = {}): UserModel {
  const userId = overrides.userId ?? uid('user');
  return {
    kind: 'User',
    userId,
    email: `${userId.toLowerCase()}@example.com`,
    name: `User ${userId}`,
    createdAt: NOW,
    updatedAt: NOW,
    orderCount: 0,
    version: 1,
    ...overrides,
  };
}

export function aProduct(overrides: Partial<ProductModel> = {}): ProductModel {
  const productId = overrides.productId ?? uid('product');
  return {
    kind: 'Product',
    productId,
    name: `Product ${productId}`,
    description: 'A product made for tests.',
    category: 'testing',
    priceCents: 1999,
    stock: 100,
    soldCount: 0,
    createdAt: NOW,
    updatedAt: NOW,
    version: 1,
    ...overrides,
  };
}

/** An order of `user` for `products` (one unit each), placed `minutesAgo` before a fixed instant. */
export function anOrder(user: UserModel, products: ProductModel[], overrides: Partial<OrderModel> = {}): OrderModel {
  const items = products.map((product) => ({
    productId: product.productId,
    productName: product.name,
    unitPriceCents: product.priceCents,
    quantity: 1,
  }));
  return {
    kind: 'Order',
    orderId: uid('order'),
    userId: user.userId,
    status: 'PLACED',
    placedAt: NOW,
    updatedAt: NOW,
    items,
    totalCents: items.reduce((sum, line) => sum + line.unitPriceCents * line.quantity, 0),
    version: 1,
    ...overrides,
  };
}

/** `count` orders of `user`, one minute apart, oldest first. */
export function ordersOf(
  user: UserModel,
  products: ProductModel[],
  count: number,
  start = Date.parse(NOW),
): OrderModel[] {
  return Array.from({ length: count }, (_, i) =>
    anOrder(user, products, { placedAt: new Date(start + i * 60_000).toISOString() }),
  );
}

/** Writes users (profile and email guard, orderCount set to their orders), products and orders. */
export async function store(
  doc: DynamoDBDocumentClient,
  tableName: string,
  { users = [], products = [], orders = [] }: { users?: UserModel[]; products?: ProductModel[]; orders?: OrderModel[] },
): Promise<void> {
  await putItems(doc, tableName, [
    ...users.flatMap((user) => [
      userToItem({
        ...user,
        orderCount: orders.filter((order) => order.userId === user.userId).length || user.orderCount,
      }),
      { ...emailGuardKey(user.email), entityType: EntityType.EmailGuard, userId: user.userId },
    ]),
    ...products.map(productToItem),
    ...orders.flatMap((order) => [orderToDetailsItem(order), orderToUserItem(order)]),
  ]);
}
