/**
 * The catalog's listing fields (`Query.products`, `Category.products`): their arguments turned
 * into a listing (prices parsed, the order's default), the migration gate for the listings a
 * table gets from a migration, and `totalCount` from the category's counter, read beside the
 * page when the query selects it (one level of latency, not two).
 */
import type { GraphQLResolveInfo } from 'graphql';
import type { Loaders } from '../db/loaders.js';
import { DEFAULT_PRODUCT_ORDER, isWholeCategory } from '../db/productQueries.js';
import type { ProductFilter, ProductOrder } from '../db/productQueries.js';
import type { SchemaGate } from '../db/schemaGate.js';
import type { CategoryProductsArgs } from '../generated/resolvers-types.js';
import { parseMoney } from '../money.js';
import type { ProductConnectionModel } from './graphqlModels.js';
import { selectsField } from './lookahead.js';

export interface ListingContext {
  loaders: Loaders;
  schema?: SchemaGate | undefined;
}

/**
 * One page of `category`'s products (the whole shop's when null). `knownCount` is the
 * category's product count when the caller already holds it (`Category.productCount`).
 */
export async function productListing(
  category: string | null,
  { namePrefix, inStock, minPrice, maxPrice, orderBy, ...args }: CategoryProductsArgs,
  { loaders, schema }: ListingContext,
  info: GraphQLResolveInfo,
  knownCount?: number,
): Promise<ProductConnectionModel> {
  const filter: ProductFilter = {
    namePrefix,
    inStock,
    minPriceCents: minPrice == null ? null : parseMoney(minPrice, 'minPrice'),
    maxPriceCents: maxPrice == null ? null : parseMoney(maxPrice, 'maxPrice'),
  };
  const order: ProductOrder = orderBy
    ? { field: orderBy.field, direction: orderBy.direction ?? 'ASC' }
    : DEFAULT_PRODUCT_ORDER;
  // GSI3-GSI5 come with a migration; GSI1 (a category by name, either way) is part of every
  // table definition, so a category's listing needs none.
  if (category === null) schema?.assertMigrated('Query.products without a category');
  else if (order.field === 'PRICE') schema?.assertMigrated('products(orderBy: PRICE)');
  let totalCount: ProductConnectionModel['totalCount'] = null;
  if (category !== null && isWholeCategory(filter)) {
    if (knownCount !== undefined) totalCount = knownCount;
    else {
      let count: Promise<number> | undefined;
      totalCount = () => (count ??= loaders.categoryCounts.load(category));
      if (selectsField(info, 'totalCount')) void totalCount().catch(() => undefined);
    }
  }
  const page = await loaders.productsPages.load({ category, filter, order, args });
  return { ...page, totalCount };
}
