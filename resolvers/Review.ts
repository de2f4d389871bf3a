import type { ProductRatingResolvers, ReviewResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';

export const Review: ReviewResolvers = {
  id: (review) => globalIdOf(review),
  product: (review, _, { access }) => access.product(review.productId),
};

export const ProductRating: ProductRatingResolvers = {
  average: (rating) => (rating.count === 0 ? null : rating.sum / rating.count),
};
