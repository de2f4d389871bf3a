import type { ProductResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';
import { toMoney } from '../src/money.js';

export const Product: ProductResolvers = {
  id: (product) => globalIdOf(product),
  price: (product) => toMoney(product.priceCents),
  // No review yet, no rating item: nothing counted.
  rating: async (product, _, { loaders }) =>
    (await loaders.rating(product.productId)) ?? {
      kind: 'ProductRating',
      productId: product.productId,
      count: 0,
      sum: 0,
      histogram: [0, 0, 0, 0, 0],
    },
  reviews: async (product, { orderBy, ...args }, { loaders }) => {
    const { productId } = product;
    const page = await loaders.reviewsPages.load({ productId, order: orderBy ?? 'NEWEST', args });
    return { ...page, totalCount: async () => (await loaders.rating(productId))?.count ?? 0 };
  },
};
