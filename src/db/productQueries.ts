/**
 * The catalog's listings (access patterns 6, 11, 12 and 14-17 in docs/access-patterns.md), as
 * pure functions: one category (a Query of GSI1 by name or GSI3 by price) or the whole shop
 * (the sharded GSI4 by name or GSI5 by price, every shard read and merged). The order chosen
 * decides which narrowing is a key condition: a name prefix in name order, a price range in
 * price order. The other one, and the stock filter, are FilterExpressions, so such pages fill
 * within the read budget (pagination.ts, shardedPages.ts) with an honest hasNextPage.
 */
import { BadUserInputError } from '../errors.js';
import { itemToProduct } from '../table/codecs.js';
import { GSI1, GSI3, GSI4, GSI5 } from '../table/definition.js';
import {
  categoryGSI1PK,
  PRODUCT_SHARDS,
  productNamePrefixGSI1SK,
  priceRange,
  shopProductsGSI4PK,
} from '../table/keys.js';
import { CATEGORY_PRODUCTS, SHOP_PRODUCTS } from '../table/entities/ranges.js';
import type { ProductModel } from '../table/models.js';
import type { PageQuery } from './pagination.js';
import type { ShardedPageQuery } from './shardedPages.js';

export interface ProductFilter {
  namePrefix?: string | null | undefined;
  inStock?: boolean | null | undefined;
  /** Inclusive bounds, in cents. */
  minPriceCents?: number | null | undefined;
  maxPriceCents?: number | null | undefined;
}

export type ProductOrderField = 'NAME' | 'PRICE';
export type SortDirection = 'ASC' | 'DESC';
export interface ProductOrder {
  field: ProductOrderField;
  direction: SortDirection;
}
/** Lower-cased name, then productId: the order GSI1 always had. */
export const DEFAULT_PRODUCT_ORDER: ProductOrder = { field: 'NAME', direction: 'ASC' };

export const MAX_NAME_PREFIX_LENGTH = 100;

export type ProductsQuery =
  { sharded: false; query: PageQuery<ProductModel> } | { sharded: true; query: ShardedPageQuery<ProductModel> };

interface Narrowing {
  prefix: string | undefined;
  priced: boolean;
  range: { from: string; to: string };
  filters: string[];
  values: Record<string, unknown>;
}

/** Checks the filter and splits it into what the chosen order's key condition takes and what stays a filter. */
function narrowing(filter: ProductFilter, order: ProductOrder): Narrowing {
  const { namePrefix, inStock, minPriceCents, maxPriceCents } = filter;
  if (namePrefix != null && namePrefix.length > MAX_NAME_PREFIX_LENGTH) {
    throw new BadUserInputError(`"namePrefix" may have at most ${MAX_NAME_PREFIX_LENGTH} characters`, 'namePrefix');
  }
  if (minPriceCents != null && maxPriceCents != null && maxPriceCents < minPriceCents) {
    throw new BadUserInputError('"maxPrice" must not be below "minPrice"', 'maxPrice');
  }
  const prefix = namePrefix != null && namePrefix !== '' ? productNamePrefixGSI1SK(namePrefix) : undefined;
  const priced = minPriceCents != null || maxPriceCents != null;
  const range = priceRange(minPriceCents ?? undefined, maxPriceCents ?? undefined);
  const filters: string[] = [];
  const values: Record<string, unknown> = {};
  if (inStock != null) {
    filters.push(inStock ? 'stock > :noStock' : 'stock <= :noStock');
    values[':noStock'] = 0;
  }
  if (order.field === 'PRICE' && prefix !== undefined) {
    filters.push('begins_with(GSI1SK, :prefix)');
    values[':prefix'] = prefix;
  }
  if (order.field === 'NAME' && priced) {
    filters.push('price BETWEEN :minPrice AND :maxPrice');
    values[':minPrice'] = minPriceCents ?? 0;
    values[':maxPrice'] = maxPriceCents ?? Number.MAX_SAFE_INTEGER;
  }
  return { prefix, priced, range, filters, values };
}

/**
 * The connection id: every argument that shapes the listing is part of it, so a cursor of one
 * order, range or filter is refused in another. The default order adds nothing, which keeps
 * the ids (and cursors) the category listings always had.
 */
function connectionId(scope: string, filter: ProductFilter, order: ProductOrder): string {
  const { namePrefix, inStock, minPriceCents, maxPriceCents } = filter;
  const parts = [`Query.products:${scope}`];
  // The prefix is case-insensitive, so its lower-cased form names the connection.
  if (namePrefix != null && namePrefix !== '') parts.push(`prefix=${namePrefix.toLowerCase()}`);
  if (inStock != null) parts.push(`inStock=${inStock}`);
  if (order.field !== 'NAME' || order.direction !== 'ASC') parts.push(`order=${order.field}.${order.direction}`);
  if (minPriceCents != null || maxPriceCents != null)
    parts.push(`price=[${minPriceCents ?? ''},${maxPriceCents ?? ''}]`);
  return parts.join(':');
}

const filterOf = ({ filters, values }: Narrowing) =>
  filters.length > 0 ? { expression: filters.join(' AND '), values } : undefined;

/**
 * Products in a category by name (access patterns 6, 11: a name prefix is a begins_with on
 * GSI1SK) or by price (14: a price range is a BETWEEN on GSI3SK), either direction.
 */
export function categoryProductsQuery(
  tableName: string,
  category: string,
  filter: ProductFilter = {},
  order: ProductOrder = DEFAULT_PRODUCT_ORDER,
): PageQuery<ProductModel> {
  const narrow = narrowing(filter, order);
  const byPrice = order.field === 'PRICE';
  const sortKey = byPrice ? 'GSI3SK' : 'GSI1SK';
  const keyCondition = byPrice
    ? narrow.priced
      ? 'GSI1PK = :pk AND GSI3SK BETWEEN :from AND :to'
      : 'GSI1PK = :pk'
    : narrow.prefix !== undefined
      ? 'GSI1PK = :pk AND begins_with(GSI1SK, :prefix)'
      : 'GSI1PK = :pk';
  return {
    tableName,
    connection: connectionId(category, filter, order),
    indexName: byPrice ? GSI3 : GSI1,
    // A GSI cursor carries the table key too: GSI keys need not be unique.
    keyAttributes: ['PK', 'SK', 'GSI1PK', sortKey],
    keyConditionExpression: keyCondition,
    expressionAttributeValues: {
      ':pk': categoryGSI1PK(category),
      ...(!byPrice && narrow.prefix !== undefined ? { ':prefix': narrow.prefix } : {}),
      ...(byPrice && narrow.priced ? { ':from': narrow.range.from, ':to': narrow.range.to } : {}),
    },
    range: CATEGORY_PRODUCTS.read({ category }),
    filter: filterOf(narrow),
    ascending: order.direction === 'ASC',
    decode: itemToProduct,
  };
}

/** Every product of the shop by name (access pattern 15, GSI4) or by price (16, GSI5), across the shards. */
export function shopProductsQuery(
  tableName: string,
  filter: ProductFilter = {},
  order: ProductOrder = DEFAULT_PRODUCT_ORDER,
): ShardedPageQuery<ProductModel> {
  const narrow = narrowing(filter, order);
  const byPrice = order.field === 'PRICE';
  return {
    tableName,
    connection: connectionId('*', filter, order),
    indexName: byPrice ? GSI5 : GSI4,
    partitionKeyName: 'GSI4PK',
    sortKeyName: byPrice ? 'GSI3SK' : 'GSI1SK',
    shardKeys: Array.from({ length: PRODUCT_SHARDS }, (_, shard) => shopProductsGSI4PK(shard)),
    shardRanges: Array.from({ length: PRODUCT_SHARDS }, (_, shard) => SHOP_PRODUCTS.read({ shard })),
    sortKeyCondition: byPrice
      ? narrow.priced
        ? { between: narrow.range }
        : undefined
      : narrow.prefix !== undefined
        ? { beginsWith: narrow.prefix }
        : undefined,
    filter: filterOf(narrow),
    ascending: order.direction === 'ASC',
    decode: itemToProduct,
  };
}

/** The listing for `category`, or the whole shop's when it is null. */
export function productsQuery(
  tableName: string,
  category: string | null,
  filter: ProductFilter = {},
  order: ProductOrder = DEFAULT_PRODUCT_ORDER,
): ProductsQuery {
  return category === null
    ? { sharded: true, query: shopProductsQuery(tableName, filter, order) }
    : { sharded: false, query: categoryProductsQuery(tableName, category, filter, order) };
}

/** True when the listing is a whole category, unfiltered: its size is the category's counter. */
export const isWholeCategory = (filter: ProductFilter = {}): boolean =>
  (filter.namePrefix == null || filter.namePrefix === '') &&
  filter.inStock == null &&
  filter.minPriceCents == null &&
  filter.maxPriceCents == null;
