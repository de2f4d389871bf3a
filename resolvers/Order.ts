import type { OrderItemResolvers, OrderResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';
import { toMoney } from '../src/money.js';

export const Order: OrderResolvers = {
  id: (order) => globalIdOf(order),
  total: (order) => toMoney(order.totalCents),
  user: (order, _, { access }) => access.user(order.userId),
};

export const OrderItem: OrderItemResolvers = {
  unitPrice: (line) => toMoney(line.unitPriceCents),
  lineTotal: (line) => toMoney(line.unitPriceCents * line.quantity),
  product: (line, _, { loaders }) => loaders.product(line.productId),
};
