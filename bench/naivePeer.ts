/**
 * "A naive peer": the same schema.graphql on the same Apollo Server + Express stack, resolved
 * field by field the way data-access functions (getUser, getUserOrders, getProduct, ...) are
 * usually wired into resolvers: one GetItem or Query per entity, no DataLoader, no batching,
 * no de-duplication, no priming from query results. Reads use the same consistency as the
 * real server so the capacity figures compare like with like.
 *
 * Run: node --import tsx bench/naivePeer.ts with DYNAMODB_ENDPOINT, TABLE_NAME, PORT
 * (NAIVE_CACHE_CONTROL=off disables Apollo's cache-control plugin, for the overhead experiment).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { ApolloServer } from '@apollo/server';
import type { ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import { makeExecutableSchema } from '@graphql-tools/schema';
import express from 'express';
import { fromGlobalId, globalIdOf } from '../src/graphql/globalId.js';
import { toMoney } from '../src/money.js';
import { itemToOrder, itemToProduct, itemToUser } from '../src/table/codecs.js';
import { identityOf } from '../src/table/entities/nodes.js';
import { PRODUCT_RATING, PRODUCT_REVIEW } from '../src/table/entities/review.js';
import type { Item } from '../src/table/codecs.js';
import { GSI1 } from '../src/table/definition.js';
import {
  categoryGSI1PK,
  emailGSI1PK,
  normalizeEmail,
  orderKey,
  productKey,
  userKey,
  userPK,
} from '../src/table/keys.js';
import type { OrderLineModel, OrderModel, ProductModel, ReviewModel, UserModel } from '../src/table/models.js';
import { fingerprintOf, newOrder, orderIdFor, orderLineOf, placeOrderTransaction } from '../src/writes/placeOrder.js';
import {
  announceReady,
  childEnv,
  costExtension,
  createMeteredDoc,
  currentMeter,
  newMeter,
  runMetered,
  stopOnSignals,
} from './childSupport.js';
import type { Meter } from './childSupport.js';

const env = childEnv();
const { client, doc } = createMeteredDoc(env);
const table = env.tableName;

interface Context {
  meter: Meter;
}

// --- the data-access functions a naive implementation has ---------------------------------

async function getItem(key: { PK: string; SK: string }): Promise<Item | undefined> {
  return (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
}
const getUser = async (userId: string) => {
  const item = await getItem(userKey(userId));
  return item ? itemToUser(item) : null;
};
const getUserByEmail = async (email: string) => {
  const result = await doc.send(
    new QueryCommand({
      TableName: table,
      IndexName: GSI1,
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': emailGSI1PK(normalizeEmail(email)) },
      Limit: 1,
    }),
  );
  const item = result.Items?.[0];
  return item ? itemToUser(item) : null;
};
const getOrder = async (orderId: string) => {
  const item = await getItem(orderKey(orderId));
  return item ? itemToOrder(item) : null;
};
const getProduct = async (productId: string) => {
  const item = await getItem(productKey(productId));
  return item ? itemToProduct(item) : null;
};

const cursorOf = (key: Record<string, unknown> | undefined) =>
  key ? Buffer.from(JSON.stringify(key)).toString('base64url') : null;
const startKey = (after: string | null | undefined) =>
  after
    ? (JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as Record<string, NativeAttributeValue>)
    : undefined;

interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
}

async function getUserOrders(userId: string, { first, after }: ConnectionArgs) {
  const result = await doc.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': userPK(userId), ':prefix': 'ORDER#' },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: first ?? 20,
      ExclusiveStartKey: startKey(after),
    }),
  );
  return connection(result.Items ?? [], result.LastEvaluatedKey, after, itemToOrder, ['PK', 'SK']);
}

async function getCategoryProducts(category: string, { first, after }: ConnectionArgs) {
  const result = await doc.send(
    new QueryCommand({
      TableName: table,
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': categoryGSI1PK(category) },
      Limit: first ?? 20,
      ExclusiveStartKey: startKey(after),
    }),
  );
  return connection(result.Items ?? [], result.LastEvaluatedKey, after, itemToProduct, [
    'PK',
    'SK',
    'GSI1PK',
    'GSI1SK',
  ]);
}

/** A product's reviews, newest first: their Query on the table's sort key. */
async function getProductReviews(productId: string, { first, after }: ConnectionArgs) {
  const result = await doc.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': productKey(productId).PK, ':prefix': PRODUCT_REVIEW.spec.key.SK.prefix },
      ConsistentRead: true,
      Limit: first ?? 20,
      ExclusiveStartKey: startKey(after),
    }),
  );
  return connection(result.Items ?? [], result.LastEvaluatedKey, after, PRODUCT_REVIEW.codec.fromItem, ['PK', 'SK']);
}

const getRating = async (productId: string) => {
  const item = await getItem(PRODUCT_RATING.keyOf({ productId }));
  return item ? PRODUCT_RATING.codec.fromItem(item) : null;
};

function connection<T>(
  items: Item[],
  lastKey: Record<string, unknown> | undefined,
  after: string | null | undefined,
  decode: (item: Item) => T,
  keyNames: string[],
) {
  const edges = items.map((item) => ({
    cursor: cursorOf(Object.fromEntries(keyNames.map((name) => [name, item[name]]))) as string,
    node: decode(item),
  }));
  return {
    edges,
    pageInfo: {
      // The usual shortcut: a LastEvaluatedKey is taken as "there is more".
      hasNextPage: lastKey !== undefined,
      hasPreviousPage: Boolean(after),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}

interface PlaceOrderInput {
  userId: string;
  idempotencyKey: string;
  items: { productId: string; quantity: number }[];
}

async function placeOrder(input: PlaceOrderInput) {
  const user = await getUser(input.userId);
  if (!user)
    return {
      order: null,
      replayed: false,
      userErrors: [{ code: 'NOT_FOUND', field: ['userId'], message: 'No such user' }],
    };
  const lines: OrderLineModel[] = [];
  for (const line of input.items) {
    const product = await getProduct(line.productId);
    if (!product) throw new Error(`no product ${line.productId}`);
    lines.push(orderLineOf(product, line.quantity));
  }
  const order = newOrder(orderIdFor(input.userId, input.idempotencyKey), input.userId, lines, new Date());
  const fingerprint = fingerprintOf(input.userId, input.items);
  await doc.send(
    new TransactWriteCommand({
      ClientRequestToken: randomUUID(),
      // Exactly the server's transaction (src/writes/placeOrder.ts).
      TransactItems: placeOrderTransaction(table, order, input.idempotencyKey, fingerprint).items,
    }),
  );
  return { order, replayed: false, userErrors: [] };
}

// --- resolvers: one data-access call per field ---------------------------------------------

type Page<T> = ReturnType<typeof connection<T>>;

const getNode = async (globalId: string) => {
  const { type, id } = fromGlobalId(globalId);
  const identity = identityOf(type);
  const item = await getItem(identity.keyOf(id));
  return item ? identity.entity.codec.fromItem(item) : null;
};

const resolvers = {
  Query: {
    node: (_: unknown, { id }: { id: string }) => getNode(id),
    nodes: (_: unknown, { ids }: { ids: string[] }) => ids.map(getNode),
    user: (_: unknown, { userId }: { userId: string }) => getUser(userId),
    userByEmail: (_: unknown, { email }: { email: string }) => getUserByEmail(email),
    order: (_: unknown, { orderId }: { orderId: string }) => getOrder(orderId),
    product: (_: unknown, { productId }: { productId: string }) => getProduct(productId),
    products: (_: unknown, { category, ...args }: ConnectionArgs & { category: string }) =>
      getCategoryProducts(category, args),
  },
  Mutation: {
    placeOrder: (_: unknown, { input }: { input: PlaceOrderInput }) => placeOrder(input),
  },
  Node: { __resolveType: (node: { kind: string }) => node.kind },
  User: {
    id: (user: UserModel) => globalIdOf(user),
    orders: async (user: UserModel, args: ConnectionArgs) => ({
      ...(await getUserOrders(user.userId, args)),
      totalCount: user.orderCount,
    }),
  },
  Order: {
    id: (order: OrderModel) => globalIdOf(order),
    total: (order: OrderModel) => toMoney(order.totalCents),
    user: (order: OrderModel) => getUser(order.userId),
  },
  OrderItem: {
    unitPrice: (line: OrderLineModel) => toMoney(line.unitPriceCents),
    lineTotal: (line: OrderLineModel) => toMoney(line.unitPriceCents * line.quantity),
    product: (line: OrderLineModel) => getProduct(line.productId),
  },
  Product: {
    id: (product: ProductModel) => globalIdOf(product),
    price: (product: ProductModel) => toMoney(product.priceCents),
    rating: async (product: ProductModel) => {
      const rating = await getRating(product.productId);
      const count = rating?.count ?? 0;
      return {
        count,
        average: count === 0 ? null : (rating?.sum ?? 0) / count,
        histogram: rating?.histogram ?? [0, 0, 0, 0, 0],
      };
    },
    reviews: async (product: ProductModel, args: ConnectionArgs) => ({
      ...(await getProductReviews(product.productId, args)),
      totalCount: async () => (await getRating(product.productId))?.count ?? 0,
    }),
  },
  Review: {
    id: (review: ReviewModel) => globalIdOf(review),
    product: (review: ReviewModel) => getProduct(review.productId),
  },
  ReviewConnection: { nodes: (page: Page<ReviewModel>) => page.edges.map((edge) => edge.node) },
  OrderConnection: { nodes: (page: Page<OrderModel>) => page.edges.map((edge) => edge.node) },
  ProductConnection: { nodes: (page: Page<ProductModel>) => page.edges.map((edge) => edge.node) },
};

const costPlugin: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response, contextValue }) {
        if (response.body.kind === 'single') {
          const result = response.body.singleResult;
          result.extensions = { ...result.extensions, ...costExtension(contextValue.meter) };
        }
      },
    };
  },
};

const schema = makeExecutableSchema({
  typeDefs: readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8'),
  resolvers,
});
const app = express();
const httpServer = http.createServer(app);
const apollo = new ApolloServer<Context>({
  schema,
  plugins: [
    ApolloServerPluginLandingPageDisabled(),
    costPlugin,
    // Experiment knob: Apollo installs its cache-control plugin (a hook on every field) by default.
    ...(process.env.NAIVE_CACHE_CONTROL === 'off' ? [ApolloServerPluginCacheControlDisabled()] : []),
  ],
  includeStacktraceInErrorResponses: false,
  stopOnTerminationSignals: false,
});
await apollo.start();
app.use(
  '/graphql',
  express.json({ limit: '100kb' }),
  (_req, _res, next) => runMetered(newMeter(), next),
  expressMiddleware(apollo, { context: async () => ({ meter: currentMeter() ?? newMeter() }) }),
);
httpServer.listen(env.port, '127.0.0.1', () => announceReady(httpServer, 'naive peer'));
stopOnSignals(httpServer, client);
