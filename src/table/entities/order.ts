/**
 * An order has two items: its details (`ORDER#<id>/DETAILS`, the target of a look-up by id and
 * the idempotency record of placeOrder) and a full copy in its user's partition, so a page of a
 * user's orders needs no further reads. Each copy carries one view of the shop-wide index GSI2:
 * the details the "all orders" view, the user's copy its status's view.
 */
import { ORDER_STATUSES } from '../models.js';
import type { OrderLineModel, OrderModel, OrderStatus } from '../models.js';
import { CorruptItemError, int, str } from './attributes.js';
import type { Item } from './attributes.js';
import { defineEntity } from './entity.js';
import { defineEvents, EventFieldError, read } from './events.js';
import {
  ORDER_SK,
  SHOP_ORDERS_ALL,
  SHOP_ORDERS_ALL_PK,
  SHOP_ORDERS_BY_STATUS,
  SHOP_ORDERS_STATUS_PK,
  STATUS_SK,
  USER_PK,
} from './ranges.js';
import { fnv1a, ORDER_SHARDS, orderShard } from './shards.js';
import { tagOf, TAGS } from './tags.js';
import { id, key } from './template.js';
import { TOPICS } from './topics.js';

export const ORDER_PK = key`ORDER#${id('orderId')}`;
const DETAILS = key`DETAILS`;

/** GSI2 keys of an order in one view: `ALL` for the details item, its status for the user's copy. */
export function shopOrderIndexKeys(
  order: Pick<OrderModel, 'orderId' | 'placedAt'>,
  view: OrderStatus | 'ALL',
): { GSI2PK: string; GSI2SK: string } {
  const shard = orderShard(order.orderId);
  return {
    GSI2PK: view === 'ALL' ? SHOP_ORDERS_ALL_PK.build({ shard }) : SHOP_ORDERS_STATUS_PK.build({ status: view, shard }),
    GSI2SK: ORDER_SK.build(order),
  };
}

/**
 * Every shop-wide view of an order's shard: what a write of either copy may change, as its key
 * shows neither the order's status before nor after. The shard is the id's hash, whatever the
 * id (one an import wrote outside the API's rules included).
 */
const everyViewOf = ({ orderId }: { orderId: string }): string[] => {
  const shard = fnv1a(orderId) % ORDER_SHARDS;
  return [TAGS.orders.of('ALL', shard), ...ORDER_STATUSES.map((status) => TAGS.orders.of(status, shard))];
};

function orderAttributes(order: OrderModel): Item {
  return {
    orderId: order.orderId,
    userId: order.userId,
    status: order.status,
    placedAt: order.placedAt,
    updatedAt: order.updatedAt,
    items: order.items.map((line) => ({
      productId: line.productId,
      name: line.productName,
      unitPrice: line.unitPriceCents,
      quantity: line.quantity,
    })),
    total: order.totalCents,
    version: order.version,
  };
}

function itemToLine(raw: unknown): OrderLineModel {
  if (typeof raw !== 'object' || raw === null) throw new CorruptItemError('order line is not a map');
  const line = raw as Item;
  return {
    productId: str(line, 'productId'),
    productName: str(line, 'name'),
    unitPriceCents: int(line, 'unitPrice'),
    quantity: int(line, 'quantity'),
  };
}

function status(item: Item): OrderStatus {
  const value = str(item, 'status');
  if (!(ORDER_STATUSES as readonly string[]).includes(value)) throw new CorruptItemError(`unknown order status`);
  return value as OrderStatus;
}

/** Reads either copy of an order (details or user-partition item). */
export function itemToOrder(item: Item): OrderModel {
  const lines = item.items;
  if (!Array.isArray(lines)) throw new CorruptItemError('order items is not a list');
  return {
    kind: 'Order',
    orderId: str(item, 'orderId'),
    userId: str(item, 'userId'),
    status: status(item),
    placedAt: str(item, 'placedAt'),
    updatedAt: str(item, 'updatedAt'),
    items: lines.map(itemToLine),
    totalCents: int(item, 'total'),
    version: int(item, 'version'),
  };
}

export const ORDER = defineEntity({
  type: 'Order',
  item: 'order details',
  holds: 'the order, idempotency record (a fingerprint of the request)',
  key: { PK: ORDER_PK, SK: DETAILS },
  indexes: { GSI2PK: SHOP_ORDERS_ALL_PK, GSI2SK: ORDER_SK },
  visibility: 'owner',
  tags: [tagOf(TAGS.order, 'orderId')],
  writeTags: everyViewOf,
  listedIn: [SHOP_ORDERS_ALL],
  node: 'Order',
  codec: {
    toItem: (order: OrderModel): Item => ({
      PK: ORDER_PK.build(order),
      SK: DETAILS.build({}),
      entityType: 'Order',
      ...shopOrderIndexKeys(order, 'ALL'),
      ...orderAttributes(order),
    }),
    fromItem: itemToOrder,
  },
});

export const USER_ORDER = defineEntity({
  type: 'UserOrder',
  item: "order copy in its user's partition",
  holds: 'a full copy of the order',
  key: { PK: USER_PK, SK: ORDER_SK },
  indexes: { LSI1SK: STATUS_SK, GSI2PK: SHOP_ORDERS_STATUS_PK, GSI2SK: ORDER_SK },
  visibility: 'owner',
  // The copy is the order as pages show it; its partition (the user's orders) is a range.
  tags: [tagOf(TAGS.order, 'orderId')],
  writeTags: everyViewOf,
  listedIn: [SHOP_ORDERS_BY_STATUS],
  node: 'Order',
  codec: {
    toItem: (order: OrderModel): Item => ({
      PK: USER_PK.build(order),
      SK: ORDER_SK.build(order),
      LSI1SK: STATUS_SK.build(order),
      ...shopOrderIndexKeys(order, order.status),
      entityType: 'UserOrder',
      ...orderAttributes(order),
    }),
    fromItem: itemToOrder,
  },
});

/**
 * Bounds of an order in an event from outside the process. They sit above what a write can
 * store (a unit test holds them against the writes' limits), so every real order fits and
 * nothing far larger gets parsed.
 */
export const ORDER_EVENT_LIMITS = { lines: 100, productName: 200 } as const;

function readLine(value: unknown, at: string): OrderLineModel {
  const raw = read.record(value, at);
  return {
    productId: read.id(raw.productId, `${at}.productId`),
    productName: read.text(raw.productName, `${at}.productName`, ORDER_EVENT_LIMITS.productName),
    unitPriceCents: read.integer(raw.unitPriceCents, `${at}.unitPriceCents`),
    quantity: read.integer(raw.quantity, `${at}.quantity`, 1),
  };
}

/**
 * An order's events, from its details item (the copy in its user's partition carries the same
 * change): placed when the item appears, a status change when its status moves. Subscribers
 * watch one order, one user's orders, or (admins) the whole shop's.
 */
export const ORDER_EVENTS = defineEvents(ORDER, {
  node: 'Order',
  types: ['ORDER_PLACED', 'ORDER_STATUS_CHANGED'],
  of: ({ name, before, after }) => {
    if (!after || name === 'REMOVE') return null;
    if (name === 'INSERT') return { type: 'ORDER_PLACED', node: after, previous: null };
    // Without an old image (a stream that is not NEW_AND_OLD_IMAGES) every MODIFY is a status
    // change: the sale markers make a repeated cancellation harmless.
    if (before?.status === after.status) return null;
    return { type: 'ORDER_STATUS_CHANGED', node: after, previous: before && { status: before.status } };
  },
  topics: [
    { kind: TOPICS.order, field: 'orderId' },
    { kind: TOPICS.userOrders, field: 'userId' },
    { kind: TOPICS.shopOrders },
  ],
  readNode: (value): OrderModel => {
    const raw = read.record(value, 'order');
    if (raw.kind !== 'Order') throw new EventFieldError('order.kind is invalid');
    return {
      kind: 'Order',
      orderId: read.id(raw.orderId, 'order.orderId'),
      userId: read.id(raw.userId, 'order.userId'),
      status: read.oneOf(raw.status, 'order.status', ORDER_STATUSES),
      placedAt: read.instant(raw.placedAt, 'order.placedAt'),
      updatedAt: read.instant(raw.updatedAt, 'order.updatedAt'),
      items: read.list(raw.items, 'order.items', 1, ORDER_EVENT_LIMITS.lines, readLine),
      totalCents: read.integer(raw.totalCents, 'order.totalCents'),
      version: read.integer(raw.version, 'order.version'),
    };
  },
  readPrevious: (value): Pick<OrderModel, 'status'> => ({
    status: read.oneOf(read.record(value, 'previous').status, 'previous.status', ORDER_STATUSES),
  }),
});
