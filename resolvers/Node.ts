import type { NodeResolvers } from '../src/generated/resolvers-types.js';

export const Node: NodeResolvers = {
  __resolveType: (node) => node.kind,
};
