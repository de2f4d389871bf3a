/**
 * Domain models: what resolvers receive as parents (codegen `mappers` point at these).
 * Money is integer cents everywhere below the GraphQL layer.
 */

export const ORDER_STATUSES = ['PLACED', 'SHIPPED', 'DELIVERED', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export interface UserModel {
  kind: 'User';
  userId: string;
  email: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  orderCount: number;
  /**
   * The user's orders per status, kept in the transactions that change them. Null on a
   * profile the counters' migration has not reached yet.
   */
  statusCounts: Record<OrderStatus, number> | null;
  version: number;
}

export interface OrderLineModel {
  productId: string;
  /** The product's name when the order was placed. */
  productName: string;
  unitPriceCents: number;
  quantity: number;
}

export interface OrderModel {
  kind: 'Order';
  orderId: string;
  userId: string;
  status: OrderStatus;
  placedAt: string;
  updatedAt: string;
  items: OrderLineModel[];
  totalCents: number;
  version: number;
}

export interface ProductModel {
  kind: 'Product';
  productId: string;
  name: string;
  description: string;
  category: string;
  priceCents: number;
  stock: number;
  /** Units sold net of cancellations: derived from the stream (src/streams/), 0 until counted. */
  soldCount: number;
  createdAt: string;
  updatedAt: string;
  version: number;
}

/** A category of the catalog with its product counter (kept by the product writes). */
export interface CategoryModel {
  kind: 'Category';
  name: string;
  productCount: number;
}

/** Anything `node(id:)` can return. */
export type NodeModel = UserModel | OrderModel | ProductModel;
