/**
 * The raw chain's answers (rawOperations.ts) in the same JSON shape as the GraphQL servers': each
 * node's fields as the benchmark's operations select them, a product decoded from a projected
 * item, and the pages' cursors.
 */
import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import { toGlobalId } from '../src/graphql/globalId.js';
import { toMoney } from '../src/money.js';
import { itemToProduct } from '../src/table/codecs.js';
import type { Item } from '../src/table/codecs.js';
import { itemKeyId, productKey } from '../src/table/keys.js';
import type { NodeModel, OrderModel, ProductModel, ReviewModel, UserModel } from '../src/table/models.js';

export type Json = Record<string, unknown>;

export const cursorOf = (key: Record<string, unknown>) => Buffer.from(JSON.stringify(key)).toString('base64url');
export const keyFromCursor = (cursor: string) =>
  JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, NativeAttributeValue>;

export const userJson = (user: UserModel) => ({
  id: toGlobalId('User', user.userId),
  userId: user.userId,
  name: user.name,
  email: user.email,
});
export const productJson = (product: ProductModel | null) =>
  product && {
    id: toGlobalId('Product', product.productId),
    productId: product.productId,
    name: product.name,
    price: toMoney(product.priceCents),
    stock: product.stock,
  };
export const reviewJson = (review: ReviewModel) => ({
  id: toGlobalId('Review', review.reviewId),
  reviewId: review.reviewId,
  rating: review.rating,
  title: review.title,
  body: review.body,
  authorName: review.authorName,
  verifiedPurchase: review.verifiedPurchase,
  createdAt: review.createdAt,
});
export const orderBase = (order: OrderModel) => ({
  id: toGlobalId('Order', order.orderId),
  orderId: order.orderId,
  status: order.status,
  placedAt: order.placedAt,
  total: toMoney(order.totalCents),
});
export const productsOf = (orders: OrderModel[]) =>
  orders.flatMap((order) => order.items.map((line) => productKey(line.productId)));
export const productFrom = (found: Map<string, Item>, productId: string, projected = false): ProductModel | null => {
  const item = found.get(itemKeyId(productKey(productId)));
  if (!item) return null;
  if (!projected) return itemToProduct(item);
  // A projected item lacks what the codec insists on: decode just the shown attributes.
  return {
    ...({
      kind: 'Product',
      description: '',
      category: '',
      createdAt: '',
      updatedAt: '',
      version: 0,
      soldCount: 0,
    } as const),
    productId: String(item.productId),
    name: String(item.name),
    priceCents: Number(item.price),
    stock: Number(item.stock),
  };
};

export function nodeJson(node: NodeModel | null): Json | null {
  if (!node) return null;
  switch (node.kind) {
    case 'User':
      return { __typename: 'User', ...userJson(node) };
    case 'Order':
      return {
        __typename: 'Order',
        id: toGlobalId('Order', node.orderId),
        orderId: node.orderId,
        status: node.status,
        total: toMoney(node.totalCents),
      };
    case 'Product':
      return { __typename: 'Product', ...productJson(node) };
    case 'Review':
      return { __typename: 'Review', ...reviewJson(node) };
  }
}
