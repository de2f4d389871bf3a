import type { CategoryResolvers } from '../src/generated/resolvers-types.js';
import { productListing } from '../src/graphql/productListing.js';

export const Category: CategoryResolvers = {
  products: (category, args, { loaders, data }, info) =>
    productListing(category.name, args, { loaders, schema: data.schema }, info, category.productCount),
};
