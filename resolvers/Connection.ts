import type { OrderConnectionResolvers, ProductConnectionResolvers } from '../src/generated/resolvers-types.js';

export const OrderConnection: OrderConnectionResolvers = {
  nodes: (page) => page.edges.map((edge) => edge.node),
};

export const ProductConnection: ProductConnectionResolvers = {
  nodes: (page) => page.edges.map((edge) => edge.node),
};
