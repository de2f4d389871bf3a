import type {
  OrderConnectionResolvers,
  ProductConnectionResolvers,
  ReviewConnectionResolvers,
} from '../src/generated/resolvers-types.js';
import type { ProductConnectionModel, ReviewConnectionModel } from '../src/graphql/graphqlModels.js';
import { Known, readField } from '../src/graphql/reads.js';
import { categoryCountSource, nodeSource } from '../src/graphql/sources.js';
import type { ProductRatingModel } from '../src/table/models.js';

export const OrderConnection: OrderConnectionResolvers = {
  nodes: (page) => page.edges.map((edge) => edge.node),
  totalCount: (page) => (typeof page.totalCount === 'function' ? page.totalCount() : page.totalCount),
};

export const ProductConnection: ProductConnectionResolvers = {
  nodes: (page) => page.edges.map((edge) => edge.node),
  // A category's counter, read only when selected (beside the page, when the listing saw it selected).
  totalCount: readField({
    source: categoryCountSource,
    key: ({ totalCount }: ProductConnectionModel) =>
      typeof totalCount === 'object' && totalCount !== null ? totalCount.countOf : new Known(totalCount),
  }),
};

export const ReviewConnection: ReviewConnectionResolvers = {
  nodes: (page) => page.edges.map((edge) => edge.node),
  // The product's rating's count: read beside the other point reads of its level.
  totalCount: readField({
    source: nodeSource,
    key: ({ productId }: ReviewConnectionModel) => ({ kind: 'ProductRating' as const, id: productId }),
    value: (found) => (found as ProductRatingModel | null)?.count ?? 0,
  }),
};
