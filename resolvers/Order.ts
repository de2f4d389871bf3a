import type { OrderItemResolvers, OrderResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';
import { readField } from '../src/graphql/reads.js';
import { nodeSource } from '../src/graphql/sources.js';
import { toMoney } from '../src/money.js';
import type { OrderLineModel, OrderModel, ProductModel, UserModel } from '../src/table/models.js';

export const Order: OrderResolvers = {
  id: (order) => globalIdOf(order),
  total: (order) => toMoney(order.totalCents),
  // Under the access rules: another customer's profile reads as null.
  user: readField({
    source: nodeSource,
    key: (order: OrderModel) => ({ kind: 'User' as const, id: order.userId }),
    value: (found) => found as UserModel | null,
  }),
};

export const OrderItem: OrderItemResolvers = {
  unitPrice: (line) => toMoney(line.unitPriceCents),
  lineTotal: (line) => toMoney(line.unitPriceCents * line.quantity),
  product: readField({
    source: nodeSource,
    key: (line: OrderLineModel) => ({ kind: 'Product' as const, id: line.productId }),
    value: (found) => found as ProductModel | null,
  }),
};
