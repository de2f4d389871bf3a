/**
 * The raw chain's operations (rawChain.ts serves them over HTTP; bench/sideBySide.ts runs them in
 * one process beside the server's execution): each operation's data fetched by the minimal chain
 * of raw SDK calls, with no GraphQL, answered in the same JSON shape as the GraphQL servers.
 *
 * Plans:
 * - `min` (default): the fewest round trips the data allows. A user with their orders is ONE
 *   Query (the profile `PROFILE` sorts right after the `ORDER#…` items in the user's partition,
 *   so a descending range read from PROFILE returns the profile, then the newest orders).
 * - `levels`: the real server's request plan (user, then orders, then products), to isolate the
 *   cost of GraphQL from the cost of the extra round trip.
 * - `projected`: `min` with ProjectionExpressions of only the attributes the response uses.
 *
 * It reads as the server does (src/db/; rawReads.ts): low-level commands, whose items the reads'
 * own unmarshalling (src/db/attributeValues.ts) converts, so that a ratio against it measures
 * GraphQL and not two ways of converting the same items. The answers' JSON shapes are rawJson.ts;
 * the one write, placeOrder, is rawPlaceOrder.ts.
 */
import type { DynamoDBDocumentClient, NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import { fromGlobalId } from '../src/graphql/globalId.js';
import { toMoney } from '../src/money.js';
import { itemToNode, itemToOrder, itemToProduct, itemToUser } from '../src/table/codecs.js';
import { productPageParams } from '../src/db/productPage.js';
import { identityOf } from '../src/table/entities/nodes.js';
import { PRODUCT_RATING, PRODUCT_REVIEW } from '../src/table/entities/review.js';
import type { Item } from '../src/table/codecs.js';
import { GSI1 } from '../src/table/definition.js';
import {
  categoryGSI1PK,
  emailGSI1PK,
  itemKeyId,
  normalizeEmail,
  orderKey,
  userKey,
  userPK,
} from '../src/table/keys.js';
import {
  cursorOf,
  keyFromCursor,
  nodeJson,
  orderBase,
  productFrom,
  productJson,
  productsOf,
  reviewJson,
  userJson,
} from './rawJson.js';
import type { Json } from './rawJson.js';
import { rawPlaceOrder } from './rawPlaceOrder.js';
import { rawReads } from './rawReads.js';

export type RawPlan = 'min' | 'levels' | 'projected';

const PAGE = 20;

/** Only what the response shows: the product's description, dates and index keys stay in the table. */
const PRODUCT_PROJECTION = { expression: 'PK, SK, productId, #n, price, stock', names: { '#n': 'name' } };
const ORDER_PROJECTION = {
  expression:
    'PK, SK, entityType, userId, email, #n, createdAt, updatedAt, orderCount, version, orderId, #s, placedAt, #i, #t',
  names: { '#n': 'name', '#s': 'status', '#i': 'items', '#t': 'total' },
};

/** The raw chain's operations on table `table`: `execute` answers one by its operationName. */
export function rawOperations(table: string) {
  const reads = rawReads(table);
  const { query, getItem, batchGet } = reads;
  const placeOrder = rawPlaceOrder(table, reads);

  async function userOrders(doc: DynamoDBDocumentClient, variables: Json, plan: RawPlan): Promise<Json> {
    const userId = String(variables.userId);
    const after = typeof variables.after === 'string' ? variables.after : undefined;
    let profile: Item | undefined;
    let orderItems: Item[];
    const ordersQuery = (limit: number, startKey?: Record<string, NativeAttributeValue>) =>
      query(doc, {
        TableName: table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': userPK(userId), ':prefix': 'ORDER#' },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
        ExclusiveStartKey: startKey,
      });
    if (plan === 'levels') {
      profile = (await batchGet(doc, [userKey(userId)])).get(itemKeyId(userKey(userId)));
      orderItems = profile ? (await ordersQuery(PAGE + 1)).Items : [];
    } else if (after) {
      // A later page: the profile is not next to it, so read both at once (one round trip).
      const [user, page] = await Promise.all([
        getItem(doc, userKey(userId)),
        ordersQuery(PAGE + 1, keyFromCursor(after)),
      ]);
      profile = user;
      orderItems = page.Items;
    } else {
      // Profile and newest orders in one descending range read: SK from 'PROFILE' down to 'ORDER#'.
      const result = await query(doc, {
        TableName: table,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': userPK(userId), ':from': 'ORDER#', ':to': 'PROFILE' },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: PAGE + 2,
        ...(plan === 'projected'
          ? { ProjectionExpression: ORDER_PROJECTION.expression, ExpressionAttributeNames: ORDER_PROJECTION.names }
          : {}),
      });
      const items = result.Items;
      profile = items[0]?.SK === 'PROFILE' ? items[0] : undefined;
      orderItems = profile ? items.slice(1) : [];
    }
    if (!profile) return { user: null };
    const user = itemToUser(profile);
    const hasNextPage = orderItems.length > PAGE;
    const page = orderItems.slice(0, PAGE);
    const orders = page.map(itemToOrder);
    const last = page.at(-1);
    const lastKey = last && { PK: last.PK, SK: last.SK };
    const found = await batchGet(doc, productsOf(orders), plan === 'projected' ? PRODUCT_PROJECTION : undefined);
    return {
      user: {
        ...userJson(user),
        orders: {
          totalCount: user.orderCount,
          pageInfo: { hasNextPage, endCursor: lastKey ? cursorOf(lastKey) : null },
          edges: orders.map((order, i) => ({
            cursor: cursorOf({ PK: page[i]?.PK, SK: page[i]?.SK }),
            node: {
              ...orderBase(order),
              items: order.items.map((line) => ({
                productId: line.productId,
                quantity: line.quantity,
                unitPrice: { amount: toMoney(line.unitPriceCents).amount },
                product: productJson(productFrom(found, line.productId, plan === 'projected')),
              })),
            },
          })),
        },
      },
    };
  }

  /** The email index, then the user's newest orders, then their products: three round trips. */
  async function nestedPage(doc: DynamoDBDocumentClient, variables: Json): Promise<Json> {
    const byEmail = await query(doc, {
      TableName: table,
      IndexName: GSI1,
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': emailGSI1PK(normalizeEmail(String(variables.email))) },
      Limit: 1,
    });
    const profile = byEmail.Items[0];
    if (!profile) return { userByEmail: null };
    const user = itemToUser(profile);
    const page = await query(doc, {
      TableName: table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': userPK(user.userId), ':prefix': 'ORDER#' },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: PAGE + 1,
    });
    const orders = page.Items.slice(0, PAGE).map(itemToOrder);
    const found = await batchGet(doc, productsOf(orders));
    const owner = userJson(user);
    return {
      userByEmail: {
        ...owner,
        orders: {
          edges: orders.map((order) => ({
            node: {
              ...orderBase(order),
              user: owner,
              items: order.items.map((line) => ({
                productId: line.productId,
                quantity: line.quantity,
                unitPrice: { amount: toMoney(line.unitPriceCents).amount },
                product: productJson(productFrom(found, line.productId)),
              })),
            },
          })),
        },
      },
    };
  }

  async function categoryPage(doc: DynamoDBDocumentClient, variables: Json): Promise<Json> {
    const result = await query(doc, {
      TableName: table,
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': categoryGSI1PK(String(variables.category)) },
      Limit: PAGE + 1,
    });
    const items = result.Items.slice(0, PAGE);
    const key = (item: Item) => ({ PK: item.PK, SK: item.SK, GSI1PK: item.GSI1PK, GSI1SK: item.GSI1SK });
    return {
      products: {
        pageInfo: {
          hasNextPage: result.Items.length > PAGE,
          endCursor: items.length ? cursorOf(key(items.at(-1) as Item)) : null,
        },
        edges: items.map((item) => {
          const product = itemToProduct(item);
          return { cursor: cursorOf(key(item)), node: { ...productJson(product), description: product.description } };
        }),
      },
    };
  }

  /**
   * The product, its rating and its 20 newest reviews in one Query: `DETAILS` < `RATING` <
   * `REVIEW#<newest first>…` in the product's partition (the server's own key design).
   */
  async function productReviews(doc: DynamoDBDocumentClient, variables: Json): Promise<Json> {
    const productId = String(variables.productId);
    const { Items: items } = await query(doc, productPageParams(table, productId, PAGE));
    const productItem = items.find((item) => item.SK === 'DETAILS');
    if (!productItem) return { product: null };
    const ratingItem = items.find((item) => item.SK === PRODUCT_RATING.spec.key.SK.prefix);
    const reviewItems = items.filter((item) => String(item.SK).startsWith(PRODUCT_REVIEW.spec.key.SK.prefix));
    const rating = ratingItem ? PRODUCT_RATING.codec.fromItem(ratingItem) : undefined;
    const count = rating?.count ?? 0;
    const page = reviewItems.slice(0, PAGE);
    const last = page.at(-1);
    return {
      product: {
        ...productJson(itemToProduct(productItem)),
        rating: {
          count,
          average: count === 0 ? null : (rating?.sum ?? 0) / count,
          histogram: rating?.histogram ?? [0, 0, 0, 0, 0],
        },
        reviews: {
          totalCount: count,
          pageInfo: {
            hasNextPage: reviewItems.length > PAGE,
            endCursor: last ? cursorOf({ PK: last.PK, SK: last.SK }) : null,
          },
          edges: page.map((item) => ({
            cursor: cursorOf({ PK: item.PK, SK: item.SK }),
            node: reviewJson(PRODUCT_REVIEW.codec.fromItem(item)),
          })),
        },
      },
    };
  }

  async function orderDetail(doc: DynamoDBDocumentClient, variables: Json): Promise<Json> {
    const key = orderKey(String(variables.orderId));
    const Item = await getItem(doc, key);
    if (!Item) return { order: null };
    const order = itemToOrder(Item);
    const found = await batchGet(doc, [userKey(order.userId), ...productsOf([order])]);
    const userItem = found.get(itemKeyId(userKey(order.userId)));
    return {
      order: {
        ...orderBase(order),
        updatedAt: order.updatedAt,
        user: userItem ? userJson(itemToUser(userItem)) : null,
        items: order.items.map((line) => ({
          productId: line.productId,
          productName: line.productName,
          quantity: line.quantity,
          unitPrice: { amount: toMoney(line.unitPriceCents).amount },
          lineTotal: { amount: toMoney(line.unitPriceCents * line.quantity).amount },
          product: productJson(productFrom(found, line.productId)),
        })),
      },
    };
  }

  async function nodes(doc: DynamoDBDocumentClient, variables: Json): Promise<Json> {
    const keys = (variables.ids as string[]).map((globalId) => {
      const { type, id } = fromGlobalId(globalId, 'ids');
      return identityOf(type).keyOf(id);
    });
    const found = await batchGet(doc, keys);
    return {
      nodes: keys.map((key) => {
        const item = found.get(itemKeyId(key));
        return nodeJson(item ? itemToNode(item) : null);
      }),
    };
  }

  async function execute(
    doc: DynamoDBDocumentClient,
    operationName: string,
    variables: Json,
    plan: RawPlan,
  ): Promise<Json> {
    switch (operationName) {
      case 'UserOrders':
        return userOrders(doc, variables, plan);
      case 'NestedPage':
        return nestedPage(doc, variables);
      case 'CategoryPage':
        return categoryPage(doc, variables);
      case 'OrderDetail':
        return orderDetail(doc, variables);
      case 'ProductReviews':
        return productReviews(doc, variables);
      case 'Nodes':
        return nodes(doc, variables);
      case 'PlaceOrder':
        return placeOrder(doc, variables);
      case 'Ping':
        return { __typename: 'Query' };
      default:
        throw new Error(`unknown operation ${operationName}`);
    }
  }

  return execute;
}
