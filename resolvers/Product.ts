import type { ProductResolvers, ProductReviewsArgs } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';
import type { ReviewConnectionModel } from '../src/graphql/graphqlModels.js';
import { readField } from '../src/graphql/reads.js';
import { nodeSource, reviewsPageSource } from '../src/graphql/sources.js';
import { toMoney } from '../src/money.js';
import type { ProductModel, ProductRatingModel } from '../src/table/models.js';

export const Product: ProductResolvers = {
  id: (product) => globalIdOf(product),
  price: (product) => toMoney(product.priceCents),
  rating: readField({
    source: nodeSource,
    key: (product: ProductModel) => ({ kind: 'ProductRating' as const, id: product.productId }),
    // No review yet, no rating item: nothing counted.
    value: (found, _key, product): ProductRatingModel =>
      (found as ProductRatingModel | null) ?? {
        kind: 'ProductRating',
        productId: product.productId,
        count: 0,
        sum: 0,
        histogram: [0, 0, 0, 0, 0],
      },
  }),
  reviews: readField({
    source: reviewsPageSource,
    key: (product: ProductModel, { orderBy, ...args }: ProductReviewsArgs) => ({
      productId: product.productId,
      order: orderBy ?? 'NEWEST',
      args,
    }),
    value: (page, { productId }): ReviewConnectionModel => ({ ...page, productId }),
  }),
};
