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

/** A customer's review of a product: at most one per author and product. */
export interface ReviewModel {
  kind: 'Review';
  reviewId: string;
  productId: string;
  /** The userId of the author (not in the schema: the author's name is). */
  authorId: string;
  /** 1 to 5 stars. */
  rating: number;
  title: string;
  body: string;
  /** The author's display name when the review was written. */
  authorName: string;
  /** The author had a placed, shipped or delivered order of the product when the review was last written. */
  verifiedPurchase: boolean;
  createdAt: string;
  updatedAt: string;
  version: number;
}

/** The star ratings a review may give. */
export const STARS = [1, 2, 3, 4, 5] as const;

/** A product's rating: kept in the transactions of the review writes, so it is always a recount of the reviews. */
export interface ProductRatingModel {
  kind: 'ProductRating';
  productId: string;
  /** How many reviews the product has. */
  count: number;
  /** The sum of their stars. */
  sum: number;
  /** How many reviews gave 1, 2, 3, 4 and 5 stars. */
  histogram: [number, number, number, number, number];
}

/** Anything `node(id:)` can return. */
export type NodeModel = UserModel | OrderModel | ProductModel | ReviewModel;
