/**
 * The catalog's listing fields (`Query.products`, `Category.products`): their arguments turned
 * into a listing (prices parsed, the order's default), the migration gate for the listings a
 * table gets from a migration, and `totalCount` from the category's counter, read beside the
 * page when the query selects it (one level of latency, not two).
 */
import type { GraphQLResolveInfo } from 'graphql';
import type { ProductsPageKey } from '../db/loaders.js';
import { DEFAULT_PRODUCT_ORDER, isWholeCategory } from '../db/productQueries.js';
import type { ProductFilter, ProductOrder } from '../db/productQueries.js';
import type { CategoryProductsArgs } from '../generated/resolvers-types.js';
import { parseMoney } from '../money.js';
import type { GraphQLContext } from './context.js';
import type { ProductConnectionModel } from './graphqlModels.js';
import { selectsField } from './lookahead.js';
import { prefetch, readField } from './reads.js';
import { categoryCountSource, productsPageSource } from './sources.js';

/** A listing's page, and its `totalCount` as the connection will carry it. */
export interface ListingKey extends ProductsPageKey {
  totalCount: ProductConnectionModel['totalCount'];
}

/**
 * The page of `category`'s products (the whole shop's when null) that `args` ask for.
 * `knownCount` is the category's product count when the caller already holds it
 * (`Category.productCount`). Throws BAD_USER_INPUT for a price that does not parse and
 * MIGRATION_PENDING for a listing the table cannot serve yet.
 */
export function listingKey(
  category: string | null,
  { namePrefix, inStock, minPrice, maxPrice, orderBy, first, after, last, before }: CategoryProductsArgs,
  context: GraphQLContext,
  info: GraphQLResolveInfo,
  knownCount?: number,
): ListingKey {
  const { schema } = context.data;
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
  let totalCount: ListingKey['totalCount'] = null;
  if (category !== null && isWholeCategory(filter)) {
    if (knownCount !== undefined) totalCount = knownCount;
    else {
      totalCount = { countOf: category };
      if (selectsField(info, 'totalCount')) prefetch(context, categoryCountSource, category);
    }
  }
  return { category, filter, order, args: { first, after, last, before }, totalCount };
}

/** A listing field: `categoryOf` names its category (null: the whole shop) and the count it may know. */
export const productListing = <P, A extends CategoryProductsArgs>(
  categoryOf: (parent: P, args: A) => { category: string | null; knownCount?: number },
) =>
  readField({
    source: productsPageSource,
    key: (parent: P, args: A, context, info) => {
      const { category, knownCount } = categoryOf(parent, args);
      return listingKey(category, args, context, info, knownCount);
    },
    // The key is the listing made above, with the count the connection carries.
    value: (page, key): ProductConnectionModel => ({ ...page, totalCount: (key as ListingKey).totalCount }),
  });
