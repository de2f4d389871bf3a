import type { ProductRatingResolvers, ReviewResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';
import { readField } from '../src/graphql/reads.js';
import { nodeSource } from '../src/graphql/sources.js';
import type { ProductModel, ReviewModel } from '../src/table/models.js';

export const Review: ReviewResolvers = {
  id: (review) => globalIdOf(review),
  product: readField({
    source: nodeSource,
    key: (review: ReviewModel) => ({ kind: 'Product' as const, id: review.productId }),
    value: (found) => found as ProductModel | null,
  }),
};

export const ProductRating: ProductRatingResolvers = {
  average: (rating) => (rating.count === 0 ? null : rating.sum / rating.count),
};
