/**
 * The key-range Queries behind the order connections (access patterns 3, 8-10 in
 * docs/access-patterns.md), as pure functions: the request a connection sends can be checked
 * without DynamoDB. Windows are key conditions, never filters. The product listings are in
 * productQueries.ts.
 */
import { BadUserInputError } from '../errors.js';
import { itemToOrder } from '../table/codecs.js';
import { GSI2, LSI1 } from '../table/definition.js';
import {
  ORDER_SHARDS,
  ORDER_SK_PREFIX,
  placedWindow,
  shopOrdersGSI2PK,
  statusLSI1SKPrefix,
  userPK,
} from '../table/keys.js';
import { SHOP_ORDERS_ALL, SHOP_ORDERS_BY_STATUS, USER_ORDERS } from '../table/entities/ranges.js';
import type { OrderModel, OrderStatus } from '../table/models.js';
import type { PageQuery } from './pagination.js';
import type { ShardedPageQuery } from './shardedPages.js';

export { categoryProductsQuery, MAX_NAME_PREFIX_LENGTH, shopProductsQuery } from './productQueries.js';
export type { ProductFilter } from './productQueries.js';

/** `[placedAfter, placedBefore)`: either bound may be absent. */
export interface PlacedWindow {
  placedAfter?: string | null | undefined;
  placedBefore?: string | null | undefined;
}

/** Refuses a window that ends before it starts (BAD_USER_INPUT naming placedBefore). */
function checkWindow({ placedAfter, placedBefore }: PlacedWindow): void {
  if (placedAfter != null && placedBefore != null && placedBefore < placedAfter) {
    throw new BadUserInputError('"placedBefore" must not be earlier than "placedAfter"', 'placedBefore');
  }
}

/** The part of a connection id that a window adds: a cursor of one window is refused in another. */
const windowId = ({ placedAfter, placedBefore }: PlacedWindow) =>
  placedAfter == null && placedBefore == null ? '' : `:[${placedAfter ?? ''},${placedBefore ?? ''})`;

/** A user's orders, newest first; by status through LSI1 (access patterns 3, 8, and their windows, 10). */
export function userOrdersQuery(
  tableName: string,
  userId: string,
  status: OrderStatus | null,
  window: PlacedWindow = {},
): PageQuery<OrderModel> {
  checkWindow(window);
  const pk = userPK(userId);
  const windowed = window.placedAfter != null || window.placedBefore != null;
  // Table and LSI reads can be strongly consistent (GSI reads cannot): a new order shows at once.
  const common = { tableName, ascending: false, consistentRead: true, decode: itemToOrder };
  const prefix = status === null ? ORDER_SK_PREFIX : statusLSI1SKPrefix(status);
  const range = placedWindow(prefix, window.placedAfter, window.placedBefore);
  const sortKey = status === null ? 'SK' : 'LSI1SK';
  const keyCondition = windowed
    ? `PK = :pk AND ${sortKey} BETWEEN :from AND :to`
    : `PK = :pk AND begins_with(${sortKey}, :prefix)`;
  const values = windowed ? { ':pk': pk, ':from': range.from, ':to': range.to } : { ':pk': pk, ':prefix': prefix };
  return {
    ...common,
    connection: `User.orders:${userId}${status === null ? '' : `:${status}`}${windowId(window)}`,
    ...(status === null ? {} : { indexName: LSI1 }),
    keyAttributes: status === null ? ['PK', 'SK'] : ['PK', 'SK', 'LSI1SK'],
    keyConditionExpression: keyCondition,
    expressionAttributeValues: values,
    range: USER_ORDERS.read({ userId }),
  };
}

/** Every order of the shop, or those in one status, newest first, across GSI2's shards (access pattern 9). */
export function shopOrdersQuery(
  tableName: string,
  status: OrderStatus | null,
  window: PlacedWindow = {},
): ShardedPageQuery<OrderModel> {
  checkWindow(window);
  const view = status ?? 'ALL';
  return {
    tableName,
    connection: `Query.orders:${view}${windowId(window)}`,
    indexName: GSI2,
    partitionKeyName: 'GSI2PK',
    sortKeyName: 'GSI2SK',
    shardKeys: Array.from({ length: ORDER_SHARDS }, (_, shard) => shopOrdersGSI2PK(view, shard)),
    shardRanges: Array.from({ length: ORDER_SHARDS }, (_, shard) =>
      status === null ? SHOP_ORDERS_ALL.read({ shard }) : SHOP_ORDERS_BY_STATUS.read({ status, shard }),
    ),
    sortKeyCondition: { between: placedWindow(ORDER_SK_PREFIX, window.placedAfter, window.placedBefore) },
    ascending: false,
    decode: itemToOrder,
  };
}
