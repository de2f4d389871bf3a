/**
 * Per-request loaders, one per access pattern (DESIGN.md). The `items` loader serves every
 * point read ("item by key") whatever the entity type, so one level of a query costs one
 * BatchGetItem: an order's user and its products travel together, and so do the nodes of
 * `nodes(ids:)`. Queries have loaders of their own, which collapse identical reads (the same
 * page asked for twice under two aliases) into one request.
 */
import DataLoader from 'dataloader';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { itemToNode, itemToOrder, itemToProduct, itemToUser } from '../table/codecs.js';
import { GSI1, LSI1 } from '../table/definition.js';
import {
  categoryGSI1PK,
  emailGSI1PK,
  isProductKey,
  isUserOrderKey,
  itemKeyId,
  orderKey,
  ORDER_SK_PREFIX,
  productKey,
  statusLSI1SKPrefix,
  userKey,
  userPK,
} from '../table/keys.js';
import type { ItemKey } from '../table/keys.js';
import type { NodeModel, OrderModel, OrderStatus, ProductModel, UserModel } from '../table/models.js';
import { batchGetItems } from './batchGet.js';
import type { Dynamo } from './client.js';
import type { CursorCodec } from './cursor.js';
import { readPage } from './pagination.js';
import type { ConnectionArgs, Page, PageQuery } from './pagination.js';

/** What the data layer needs from the process: shared by every request. */
export interface DataSources {
  dynamo: Dynamo;
  tableName: string;
  cursors: CursorCodec;
}

export interface OrdersPageKey {
  userId: string;
  status: OrderStatus | null;
  args: ConnectionArgs;
}

export interface ProductsPageKey {
  category: string;
  args: ConnectionArgs;
}

export type Loaders = ReturnType<typeof createLoaders>;

const argsKey = (args: ConnectionArgs) => JSON.stringify([args.first, args.after, args.last, args.before]);

/** A user's orders, newest first; by status through LSI1 (access patterns 3 and 8). */
export function userOrdersQuery(tableName: string, userId: string, status: OrderStatus | null): PageQuery<OrderModel> {
  const pk = userPK(userId);
  // Table and LSI reads can be strongly consistent (GSI reads cannot): a new order shows at once.
  const common = { tableName, ascending: false, consistentRead: true, decode: itemToOrder };
  if (status === null) {
    return {
      ...common,
      connection: `User.orders:${userId}`,
      keyAttributes: ['PK', 'SK'],
      keyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      expressionAttributeValues: { ':pk': pk, ':prefix': ORDER_SK_PREFIX },
    };
  }
  return {
    ...common,
    connection: `User.orders:${userId}:${status}`,
    indexName: LSI1,
    keyAttributes: ['PK', 'SK', 'LSI1SK'],
    keyConditionExpression: 'PK = :pk AND begins_with(LSI1SK, :prefix)',
    expressionAttributeValues: { ':pk': pk, ':prefix': statusLSI1SKPrefix(status) },
  };
}

/** Products in a category, by lower-cased name then productId (access pattern 6). */
export function categoryProductsQuery(tableName: string, category: string): PageQuery<ProductModel> {
  return {
    tableName,
    connection: `Query.products:${category}`,
    indexName: GSI1,
    // A GSI cursor carries the table key too: GSI keys need not be unique.
    keyAttributes: ['PK', 'SK', 'GSI1PK', 'GSI1SK'],
    keyConditionExpression: 'GSI1PK = :pk',
    expressionAttributeValues: { ':pk': categoryGSI1PK(category) },
    ascending: true,
    decode: itemToProduct,
  };
}

export function createLoaders({ dynamo, tableName, cursors }: DataSources) {
  const items = new DataLoader<ItemKey, NodeModel | null, string>(
    async (keys) => {
      // Strongly consistent: a query sent right after a mutation sees it (read-your-writes).
      const rows = await batchGetItems(dynamo.doc, tableName, keys, { consistentRead: true });
      return rows.map((row) => (row ? itemToNode(row) : null));
    },
    { cacheKeyFn: itemKeyId },
  );

  const prime = (key: ItemKey, node: NodeModel) => {
    items.clear(key).prime(key, node);
  };
  const primeOrders = (orders: readonly OrderModel[]) => {
    for (const order of orders) prime(orderKey(order.orderId), order);
  };

  const userByEmail = new DataLoader<string, UserModel | null>((emails) =>
    Promise.all(
      emails.map(async (email) => {
        const result = await dynamo.doc.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: GSI1,
            KeyConditionExpression: 'GSI1PK = :pk',
            ExpressionAttributeValues: { ':pk': emailGSI1PK(email) },
            Limit: 1,
          }),
        );
        const item = result.Items?.[0];
        if (!item) return null;
        const user = itemToUser(item);
        prime(userKey(user.userId), user);
        return user;
      }),
    ),
  );

  const ordersPages = new DataLoader<OrdersPageKey, Page<OrderModel>, string>(
    (keys) =>
      Promise.all(
        keys.map(async ({ userId, status, args }) => {
          const { page } = await readPage(dynamo.doc, userOrdersQuery(tableName, userId, status), args, cursors);
          primeOrders(page.edges.map((edge) => edge.node));
          return page;
        }),
      ),
    { cacheKeyFn: ({ userId, status, args }) => JSON.stringify([userId, status, argsKey(args)]) },
  );

  const productsPages = new DataLoader<ProductsPageKey, Page<ProductModel>, string>(
    (keys) =>
      Promise.all(
        keys.map(async ({ category, args }) => {
          const { page } = await readPage(dynamo.doc, categoryProductsQuery(tableName, category), args, cursors);
          for (const edge of page.edges) prime(productKey(edge.node.productId), edge.node);
          return page;
        }),
      ),
    { cacheKeyFn: ({ category, args }) => JSON.stringify([category, argsKey(args)]) },
  );

  const ofKind =
    <K extends NodeModel['kind']>(kind: K) =>
    (node: NodeModel | null) =>
      node?.kind === kind ? (node as Extract<NodeModel, { kind: K }>) : null;

  return {
    items,
    userByEmail,
    ordersPages,
    productsPages,
    user: (userId: string) => items.load(userKey(userId)).then(ofKind('User')),
    order: (orderId: string) => items.load(orderKey(orderId)).then(ofKind('Order')),
    product: (productId: string) => items.load(productKey(productId)).then(ofKind('Product')),
    /**
     * Drops what this request cached of the items a write touched, and the pages that may list
     * them: the next read goes to DynamoDB.
     */
    forgetTouched: (keys: readonly ItemKey[]) => {
      for (const key of keys) items.clear(key);
      if (keys.some(isUserOrderKey)) ordersPages.clearAll();
      if (keys.some(isProductKey)) productsPages.clearAll();
    },
    /** Makes later reads in this request see `node` (after a write, or from a Query's items). */
    prime: (node: NodeModel) => {
      const key =
        node.kind === 'User'
          ? userKey(node.userId)
          : node.kind === 'Order'
            ? orderKey(node.orderId)
            : productKey(node.productId);
      prime(key, node);
    },
  };
}
