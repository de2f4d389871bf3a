/**
 * Item <-> domain model codecs. Items are what the DynamoDB document client reads and writes;
 * models are what resolvers see. The attribute layout is documented in the README ("The table").
 */
import {
  categoryCounterKey,
  categoryGSI1PK,
  emailGSI1PK,
  orderKey,
  productGSI1SK,
  productPriceGSI3SK,
  productShard,
  orderShard,
  shopProductsGSI4PK,
  productKey,
  shopOrderGSI2SK,
  shopOrdersGSI2PK,
  statusCountAttribute,
  userKey,
  userOrderLSI1SK,
  userOrderSK,
  userPK,
} from './keys.js';
import { ORDER_STATUSES } from './models.js';
import type {
  CategoryModel,
  NodeModel,
  OrderLineModel,
  OrderModel,
  OrderStatus,
  ProductModel,
  UserModel,
} from './models.js';

export type Item = Record<string, unknown>;

/** `entityType` values. An order has two items: its details and the copy in its user's partition. */
export const EntityType = {
  User: 'User',
  EmailGuard: 'EmailGuard',
  Order: 'Order',
  UserOrder: 'UserOrder',
  Product: 'Product',
  Category: 'Category',
  Meta: 'Meta',
  AppManifest: 'AppManifest',
  TrustedDocument: 'TrustedDocument',
} as const;

/** Raised when an item in the table does not have the shape this code wrote: a bug or foreign data. */
export class CorruptItemError extends Error {
  override name = 'CorruptItemError';
}

function str(item: Item, name: string): string {
  const value = item[name];
  if (typeof value !== 'string') throw new CorruptItemError(`item attribute ${name} is not a string`);
  return value;
}

function int(item: Item, name: string): number {
  const value = item[name];
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new CorruptItemError(`item attribute ${name} is not an integer`);
  }
  return value;
}

function status(item: Item): OrderStatus {
  const value = str(item, 'status');
  if (!(ORDER_STATUSES as readonly string[]).includes(value)) throw new CorruptItemError(`unknown order status`);
  return value as OrderStatus;
}

export function userToItem(user: UserModel): Item {
  return {
    ...userKey(user.userId),
    entityType: EntityType.User,
    GSI1PK: emailGSI1PK(user.email),
    GSI1SK: userPK(user.userId),
    userId: user.userId,
    email: user.email,
    name: user.name,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
    orderCount: user.orderCount,
    ...(user.statusCounts ? statusCountAttributes(user.statusCounts) : {}),
    version: user.version,
  };
}

/** `orderCountPLACED`, `orderCountSHIPPED`, ...: flat attributes, so `if_not_exists(x, 0) + 1` works on any profile. */
export function statusCountAttributes(counts: Record<OrderStatus, number>): Item {
  return Object.fromEntries(ORDER_STATUSES.map((s) => [statusCountAttribute(s), counts[s]]));
}

/** Zero orders in every status: a new profile's counters. */
export const noStatusCounts = (): Record<OrderStatus, number> =>
  Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0])) as Record<OrderStatus, number>;

function statusCounts(item: Item): Record<OrderStatus, number> | null {
  if (ORDER_STATUSES.some((s) => item[statusCountAttribute(s)] === undefined)) return null;
  return Object.fromEntries(ORDER_STATUSES.map((s) => [s, int(item, statusCountAttribute(s))])) as Record<
    OrderStatus,
    number
  >;
}

export function itemToUser(item: Item): UserModel {
  return {
    kind: 'User',
    userId: str(item, 'userId'),
    email: str(item, 'email'),
    name: str(item, 'name'),
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
    orderCount: int(item, 'orderCount'),
    statusCounts: statusCounts(item),
    version: int(item, 'version'),
  };
}

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

/** The order's own item, `ORDER#<id>/DETAILS`: the target of order(orderId) and node(id); in GSI2's "all orders" view. */
export function orderToDetailsItem(order: OrderModel): Item {
  return {
    ...orderKey(order.orderId),
    entityType: EntityType.Order,
    ...shopOrderIndexKeys(order, 'ALL'),
    ...orderAttributes(order),
  };
}

/** GSI2 keys of an order in one view: `ALL` for the details item, its status for the user's copy. */
export function shopOrderIndexKeys(
  order: Pick<OrderModel, 'orderId' | 'placedAt'>,
  view: OrderStatus | 'ALL',
): { GSI2PK: string; GSI2SK: string } {
  return {
    GSI2PK: shopOrdersGSI2PK(view, orderShard(order.orderId)),
    GSI2SK: shopOrderGSI2SK(order.placedAt, order.orderId),
  };
}

/** The full copy in the user's partition, so a page of a user's orders needs no further reads. */
export function orderToUserItem(order: OrderModel): Item {
  return {
    PK: userPK(order.userId),
    SK: userOrderSK(order.placedAt, order.orderId),
    LSI1SK: userOrderLSI1SK(order.status, order.placedAt, order.orderId),
    ...shopOrderIndexKeys(order, order.status),
    entityType: EntityType.UserOrder,
    ...orderAttributes(order),
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

export function productToItem(product: ProductModel): Item {
  return {
    ...productKey(product.productId),
    entityType: EntityType.Product,
    GSI1PK: categoryGSI1PK(product.category),
    GSI1SK: productGSI1SK(product.name, product.productId),
    ...productBrowseKeys(product),
    productId: product.productId,
    name: product.name,
    description: product.description,
    category: product.category,
    price: product.priceCents,
    stock: product.stock,
    createdAt: product.createdAt,
    updatedAt: product.updatedAt,
    version: product.version,
  };
}

/** The keys of a product's browse orders (GSI3-GSI5, src/table/definition.ts). */
export function productBrowseKeys(product: Pick<ProductModel, 'productId' | 'priceCents'>): {
  GSI3SK: string;
  GSI4PK: string;
} {
  return {
    GSI3SK: productPriceGSI3SK(product.priceCents, product.productId),
    GSI4PK: shopProductsGSI4PK(productShard(product.productId)),
  };
}

export function itemToProduct(item: Item): ProductModel {
  return {
    kind: 'Product',
    productId: str(item, 'productId'),
    name: str(item, 'name'),
    description: str(item, 'description'),
    category: str(item, 'category'),
    priceCents: int(item, 'price'),
    stock: int(item, 'stock'),
    soldCount: item.soldCount === undefined ? 0 : int(item, 'soldCount'),
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
    version: int(item, 'version'),
  };
}

/** The counter item of a category (`META#categories / CATEGORY#<name>`). */
export function categoryToItem(category: CategoryModel): Item {
  return {
    ...categoryCounterKey(category.name),
    entityType: EntityType.Category,
    name: category.name,
    productCount: category.productCount,
  };
}

export function itemToCategory(item: Item): CategoryModel {
  return { kind: 'Category', name: str(item, 'name'), productCount: int(item, 'productCount') };
}

/** Decodes any item a point read can return; null for item types that are not GraphQL nodes. */
export function itemToNode(item: Item): NodeModel | null {
  switch (item.entityType) {
    case EntityType.User:
      return itemToUser(item);
    case EntityType.Order:
    case EntityType.UserOrder:
      return itemToOrder(item);
    case EntityType.Product:
      return itemToProduct(item);
    default:
      return null;
  }
}
