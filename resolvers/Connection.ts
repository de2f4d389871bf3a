import type {
  OrderConnectionResolvers,
  ProductConnectionResolvers,
  ReviewConnectionResolvers,
} from '../src/generated/resolvers-types.js';

export const OrderConnection: OrderConnectionResolvers = {
  nodes: (page) => page.edges.map((edge) => edge.node),
  totalCount: (page) => (typeof page.totalCount === 'function' ? page.totalCount() : page.totalCount),
};

export const ProductConnection: ProductConnectionResolvers = {
  nodes: (page) => page.edges.map((edge) => edge.node),
  totalCount: (page) => (typeof page.totalCount === 'function' ? page.totalCount() : page.totalCount),
};

export const ReviewConnection: ReviewConnectionResolvers = {
  nodes: (page) => page.edges.map((edge) => edge.node),
  totalCount: (page) => page.totalCount(),
};
