/**
 * Small factories for arranging data directly in the table (writes through the API come with
 * the mutations). Each takes overrides; ids are unique unless given.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putItems } from '../../src/db/batchWrite.js';
import {
  categoryToItem,
  EntityType,
  noStatusCounts,
  orderToDetailsItem,
  orderToUserItem,
  productToItem,
  userToItem,
} from '../../src/table/codecs.js';
import { emailGuardKey } from '../../src/table/keys.js';
import type { ChangeEvent, ChangeEventOf } from '../../src/events/changeEvent.js';
import { ORDER_EVENTS } from '../../src/table/entities/order.js';
import type { OrderModel, OrderStatus, ProductModel, UserModel } from '../../src/table/models.js';

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
    statusCounts: null,
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

/**
 * A maker of ORDER_PLACED events of new orders of `user`, numbered from `firstSeq` upwards with
 * gaps of `step` (stream sequence numbers grow, not one by one), as the consumer publishes them.
 */
export function placedEvents(user: UserModel, products: ProductModel[], firstSeq: bigint, step = 7n) {
  let seq = firstSeq;
  return (): ChangeEventOf<'Order'> => {
    seq += step;
    return anOrderEvent(anOrder(user, products), seq.toString(), { at: new Date().toISOString() });
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

/**
 * Writes users (profile and email guard, orderCount and per-status counts set to their
 * orders), products and orders. Category counters are written as they would be kept (the
 * products given per category) only when `categoryCounters` is true: a test that stores a
 * category in several calls writes them itself.
 */
export async function store(
  doc: DynamoDBDocumentClient,
  tableName: string,
  {
    users = [],
    products = [],
    orders = [],
    categoryCounters = false,
  }: { users?: UserModel[]; products?: ProductModel[]; orders?: OrderModel[]; categoryCounters?: boolean },
): Promise<void> {
  const counters = new Map<string, number>();
  if (categoryCounters) for (const p of products) counters.set(p.category, (counters.get(p.category) ?? 0) + 1);
  await putItems(doc, tableName, [
    ...users.flatMap((user) => [
      userToItem({
        ...user,
        orderCount: orders.filter((order) => order.userId === user.userId).length || user.orderCount,
        statusCounts: countsOf(user, orders),
      }),
      { ...emailGuardKey(user.email), entityType: EntityType.EmailGuard, userId: user.userId },
    ]),
    ...products.map(productToItem),
    ...orders.flatMap((order) => [orderToDetailsItem(order), orderToUserItem(order)]),
    ...[...counters].map(([name, productCount]) => categoryToItem({ kind: 'Category', name, productCount })),
  ]);
}

function countsOf(user: UserModel, orders: readonly OrderModel[]) {
  const mine = orders.filter((order) => order.userId === user.userId);
  if (mine.length === 0) return user.statusCounts ?? noStatusCounts();
  const counts = noStatusCounts();
  for (const order of mine) counts[order.status] += 1;
  return counts;
}

/**
 * The change event of `order` as the stream processor makes it (ORDER_PLACED unless `previous`
 * gives the status it left), under sequence number `seq`.
 */
export function anOrderEvent(
  order: OrderModel,
  seq: string,
  { at = NOW, previous = null }: { at?: string; previous?: { status: OrderStatus } | null } = {},
): ChangeEventOf<'Order'> {
  return {
    entity: 'Order',
    type: previous ? 'ORDER_STATUS_CHANGED' : 'ORDER_PLACED',
    seq,
    at,
    node: order,
    previous,
    topics: ORDER_EVENTS.topicsOf(order),
  };
}

/** The order id of an order's change event; undefined for an event about another kind of node. */
export const orderIdOf = (event: ChangeEvent): string | undefined =>
  event.entity === 'Order' ? event.node.orderId : undefined;
