/**
 * Item collections: a user's profile (`USER#id/PROFILE`) and their orders (`USER#id/ORDER#…`)
 * share a partition, and `PROFILE` sorts after every `ORDER#` key. So one descending Query over
 * `SK BETWEEN 'ORDER#' AND 'PROFILE'` returns the profile first, then the newest orders: a user
 * and the first page of their orders cost one round trip instead of a BatchGetItem and a Query.
 *
 * Only the first page, newest first, without a status filter has that shape (`fusablePage`);
 * every other page is read by readPage. The page this read builds is the one readPage would
 * build: the same cursors (bound to the same connection), and `hasNextPage` from one item more
 * than the page.
 */
import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { itemToUser } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { USER_ORDERS } from '../table/entities/ranges.js';
import { USER } from '../table/entities/user.js';
import { ORDER_SK_PREFIX, PROFILE_SK, userPK } from '../table/keys.js';
import type { OrderModel, OrderStatus, UserModel } from '../table/models.js';
import { unmarshallItems } from './attributeValues.js';
import type { CursorCodec } from './cursor.js';
import { rangeQuery } from './dependencyRecord.js';
import { buildPage, planPage, readPage } from './pagination.js';
import type { ConnectionArgs, Page, PageQuery } from './pagination.js';

export interface UserWithOrders {
  user: UserModel | null;
  page: Page<OrderModel>;
}

/**
 * The page size if `User.orders(status, args)` can come from the fused read: no status, no
 * cursor, forward. Null otherwise, and also for arguments planPage refuses (the ordinary path
 * reports those, on the field that has them).
 */
export function fusablePage(
  status: OrderStatus | null | undefined,
  args: ConnectionArgs,
  ordersQuery: PageQuery<OrderModel>,
  codec: CursorCodec,
): number | null {
  // A status filter reads LSI1, a cursor starts inside the orders, `last` reads oldest first.
  if (status != null || args.after != null || args.before != null || args.last != null) return null;
  try {
    return planPage(args, ordersQuery, codec).size;
  } catch {
    return null;
  }
}

/** The Query: descending from `PROFILE`, the profile, `size` orders and one more to prove a next page. */
export function userCollectionParams(tableName: string, userId: string, size: number): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :orders AND :profile',
    ExpressionAttributeValues: { ':pk': userPK(userId), ':orders': ORDER_SK_PREFIX, ':profile': PROFILE_SK },
    ScanIndexForward: false,
    // Strongly consistent, as the BatchGetItem and the Query it replaces.
    ConsistentRead: true,
    Limit: size + 2,
  };
}

/**
 * Reads the user and the first `size` of their orders (`ordersQuery` is the orders connection
 * the page belongs to). Costs one Query; a second read by readPage only where DynamoDB cut the
 * first short (its 1 MB limit) or where the range held an item that is not an order.
 */
export function readUserWithOrders(
  doc: DynamoDBDocumentClient,
  tableName: string,
  userId: string,
  size: number,
  ordersQuery: PageQuery<OrderModel>,
  codec: CursorCodec,
): Promise<UserWithOrders> {
  const params = userCollectionParams(tableName, userId, size);
  // It reads the profile and the orders' range: it depends on both.
  const range = { tags: [...USER.tagsOf({ userId }), ...USER_ORDERS.tagsOf({ userId })], byIndex: false };
  // One `then`, no async function: a request's reads are counted in promises (docs/performance.md).
  return doc.send(rangeQuery(params, range)).then((result) => {
    const items: Item[] = unmarshallItems(result.Items);
    // Descending: the profile, if the user exists, is the first item.
    const hasProfile = items[0]?.SK === PROFILE_SK;
    const user = hasProfile ? itemToUser(items[0]!) : null;
    const orders = hasProfile ? items.slice(1) : items;
    const complete = result.LastEvaluatedKey === undefined || items.length === params.Limit;
    const onlyOrders = orders.every((item) => typeof item.SK === 'string' && item.SK.startsWith(ORDER_SK_PREFIX));
    if (!complete || !onlyOrders) {
      return readPage(doc, ordersQuery, { first: size }, codec).then(({ page }) => ({ user, page }));
    }
    const plan = { size, backward: false, cursor: undefined };
    return { user, page: buildPage(orders, plan, orders.length > size, ordersQuery, codec).page };
  });
}
