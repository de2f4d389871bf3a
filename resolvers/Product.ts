import type { ProductResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';
import { toMoney } from '../src/money.js';

export const Product: ProductResolvers = {
  id: (product) => globalIdOf(product),
  price: (product) => toMoney(product.priceCents),
};
