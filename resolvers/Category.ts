import type { CategoryResolvers } from '../src/generated/resolvers-types.js';

export const Category: CategoryResolvers = {
  products: (category, { namePrefix, inStock, ...args }, { loaders }) =>
    loaders.productsPages.load({ category: category.name, filter: { namePrefix, inStock }, args }),
};
