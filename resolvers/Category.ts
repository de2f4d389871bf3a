import type { CategoryResolvers } from '../src/generated/resolvers-types.js';
import { productListing } from '../src/graphql/productListing.js';
import type { CategoryModel } from '../src/table/models.js';

export const Category: CategoryResolvers = {
  products: productListing((category: CategoryModel) => ({
    category: category.name,
    knownCount: category.productCount,
  })),
};
