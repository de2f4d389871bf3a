/**
 * The planned executor (EXECUTOR=auto, src/pipeline/execution/plan/) beside graphql-js, each in a pipeline
 * of its own over the demo data in DynamoDB Local: the same answers (data with its key order,
 * errors), the shape's fewest requests, every execution it leaves to graphql-js counted by why,
 * and a fall-back after a failed read that reads nothing again.
 */
import { randomUUID } from 'node:crypto';
import { BatchGetItemCommand, DeleteTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Kind, parse } from 'graphql';
import type { ExecutionResult, GraphQLObjectType } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Viewer } from '../src/auth/tokens.js';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import type { ExecutorConfig } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { CursorCodec } from '../src/db/cursor.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { sha256 } from '../src/pipeline/admission/admission.js';
import type { AdmittedOperation } from '../src/pipeline/admission/admission.js';
import { createMetrics } from '../src/pipeline/report/metrics.js';
import { createPipeline } from '../src/pipeline/pipeline.js';
import { TrustedDocuments } from '../src/pipeline/documents/trustedDocuments.js';
import { toGlobalId } from '../src/graphql/globalId.js';
import { demoData } from '../src/seed/demoData.js';
import { demoCategoryItems, demoItems } from '../src/seed/seed.js';
import { endpoint, TEST_AUTH, TEST_CURSOR_SECRET } from './support/harness.js';

const ALICE: Viewer = { userId: 'alice', role: 'customer' };
const ADMIN: Viewer = { userId: 'test-admin', role: 'admin' };

const NESTED_PAGE = `query NestedPage($email: String!) {
  userByEmail(email: $email) {
    id userId name email
    orders(first: 20) {
      edges { node { id status total { amount } user { id name } items { quantity product { id name price { amount } } } } }
    }
  }
}`;

const PRODUCT_PAGE = `query ProductPage($productId: ID!, $order: ReviewOrder) {
  product(productId: $productId) {
    id name
    rating { count average histogram }
    reviews(first: 3, orderBy: $order) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { cursor node { id reviewId rating title authorName verifiedPurchase product { id name } } }
    }
  }
}`;

/** A document client whose reads by key (GetItem, BatchGetItem) fail, counting them. */
function failingKeyReads(doc: DynamoDBDocumentClient) {
  const counted = { keyReads: 0 };
  const send = (command: object, options?: object): Promise<unknown> => {
    if (command instanceof BatchGetItemCommand || command instanceof GetItemCommand) {
      counted.keyReads += 1;
      return Promise.reject(new Error('read by key failed'));
    }
    return doc.send(command as never, options as never);
  };
  return { doc: Object.create(doc, { send: { value: send } }) as DynamoDBDocumentClient, counted };
}

describe('the planned executor', () => {
  let dynamo: Dynamo;
  let tableName: string;

  const pipelineFor = (executor: ExecutorConfig['executor'], doc: DynamoDBDocumentClient = dynamo.doc) => {
    const metrics = createMetrics();
    const pipeline = createPipeline({
      data: { dynamo: { client: dynamo.client, doc }, tableName, cursors: new CursorCodec(TEST_CURSOR_SECRET) },
      log: pino({ level: 'silent' }),
      auth: TEST_AUTH,
      limits: DEFAULT_LIMITS,
      introspection: false,
      persistedOnly: false,
      documents: new TrustedDocuments(),
      metrics,
      executor: { executor, maxDocuments: 100, maxBytes: 1024 * 1024 },
    });
    /**
     * Admitted as every transport admits it (the document, the operation, the variables, the
     * cost); what admission refuses (variables that do not coerce, no operation to run) reaches the
     * executor only when admission is bypassed, as here, for the executor's own guards.
     */
    const admit = async (query: string, variables: Record<string, unknown>): Promise<AdmittedOperation> => {
      const admitted = await pipeline.admission.admit({ query, variables }, 'ws');
      if (admitted.ok) return admitted;
      const document = parse(query);
      const operation = document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
      if (!operation) throw new Error('no operation');
      const bypassed = { document, hash: sha256(query), readsOnlyPublicData: false };
      return { ok: true, document: bypassed, operation, operationName: null, variables, cost: 0, trusted: false };
    };
    const execute = async (query: string, variables: Record<string, unknown>, viewer: Viewer | null) => {
      const admitted = await admit(query, variables);
      const contextValue = pipeline.execution.context(viewer, `planned-${randomUUID()}`);
      const result = await pipeline.execution.execute(admitted, contextValue);
      return { result, requests: contextValue.cost.requests };
    };
    const fallbacks = async () =>
      Object.fromEntries(
        (await metrics.executorFallbacks.get()).values.map((value) => [value.labels.class, value.value]),
      );
    return { execute, fallbacks, schema: pipeline.schema };
  };

  /** What a client compares: data as JSON (key order included), errors by message, path and code. */
  const seen = ({ data, errors }: ExecutionResult) => ({
    data: JSON.stringify(data),
    errors: errors?.map((error) => ({ message: error.message, path: error.path, code: error.extensions.code })),
  });

  beforeAll(async () => {
    tableName = `t-${randomUUID()}`;
    dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
    await ensureTable(dynamo.client, tableName, endpoint());
    await putItems(dynamo.doc, tableName, [...demoItems(), ...demoCategoryItems()]);
  });

  afterAll(async () => {
    await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName }));
    dynamo?.client.destroy();
  });

  it("answers the nested page as graphql-js does, in the shape's three requests, without a fall-back", async () => {
    const planned = pipelineFor('auto');
    const oracle = pipelineFor('graphql-js');
    const variables = { email: 'alice@example.com' };
    const answer = await planned.execute(NESTED_PAGE, variables, ALICE);
    const expected = await oracle.execute(NESTED_PAGE, variables, ALICE);
    expect(seen(answer.result)).toEqual(seen(expected.result));
    expect(answer.result.errors).toBeUndefined();
    expect(JSON.stringify(answer.result.data)).toContain('"product":{"id"');
    // The result carries the JSON the planner wrote, byte for byte graphql-js's: the response writes it as it is.
    expect(answer.result.dataJson).toBe(JSON.stringify(expected.result.data));
    expect(expected.result.dataJson).toBeUndefined();
    // The email index, the orders page, one BatchGetItem of the products.
    expect(answer.requests).toBe(3);
    expect(expected.requests).toBe(3);
    expect(await planned.fallbacks()).toEqual({});
  });

  it("writes aliases that name Object's own properties, and fields read in later rounds, in graphql-js's key order", async () => {
    const planned = pipelineFor('auto');
    const oracle = pipelineFor('graphql-js');
    // `orders` and each order's `user` come with later rounds than the fields around them.
    const query = `query ($email: String!) {
      userByEmail(email: $email) {
        __proto__: name
        orders(first: 2) { edges { node { constructor: orderId user { hasOwnProperty: name } status } } }
        toString: email
      }
    }`;
    const variables = { email: 'alice@example.com' };
    const answer = await planned.execute(query, variables, ALICE);
    const expected = await oracle.execute(query, variables, ALICE);
    expect(answer.result.errors).toBeUndefined();
    expect(answer.result.dataJson).toBe(JSON.stringify(expected.result.data));
    expect(answer.result.dataJson).toMatch(
      /^\{"userByEmail":\{"__proto__":"[^"]+","orders":\{"edges":\[\{"node":\{"constructor":/,
    );
    expect(Object.keys((answer.result.data as { userByEmail: object }).userByEmail)).toEqual([
      '__proto__',
      'orders',
      'toString',
    ]);
    expect(await planned.fallbacks()).toEqual({});
  });

  it.each([
    // The product, its rating and its first page in one Query of the product's item collection.
    ['newest first', 'NEWEST', 1],
    // A Query of the stars index, and the product with its rating in one BatchGetItem.
    ['by stars', 'HIGHEST_RATING', 2],
  ] as const)(
    "answers the product review page %s (%s) as graphql-js does, in the shape's %i request(s), without a fall-back",
    async (_order, order, requests) => {
      const { productId } = demoData().reviews[0]!;
      const planned = pipelineFor('auto');
      const oracle = pipelineFor('graphql-js');
      const answer = await planned.execute(PRODUCT_PAGE, { productId, order }, null);
      const expected = await oracle.execute(PRODUCT_PAGE, { productId, order }, null);
      expect(seen(answer.result)).toEqual(seen(expected.result));
      expect(answer.result.errors).toBeUndefined();
      expect(JSON.stringify(answer.result.data)).toMatch(/"totalCount":[1-9].*"product":\{"id"/);
      expect(answer.requests).toBe(requests);
      expect(expected.requests).toBe(requests);
      expect(await planned.fallbacks()).toEqual({});
    },
  );

  it("answers a user's own review, a review's product and products' ratings in a listing without a fall-back", async () => {
    const review = demoData().reviews[0]!;
    const query = `query ($productId: ID!, $id: ID!) {
      viewer { review(productId: $productId) { reviewId product { name rating { count } } } }
      node(id: $id) { ... on Review { title product { id reviews(first: 1) { totalCount } } } }
      products(first: 4) { edges { node { id rating { count average } } } }
    }`;
    const variables = { productId: review.productId, id: toGlobalId('Review', review.reviewId) };
    const author: Viewer = { userId: review.authorId, role: 'customer' };
    const planned = pipelineFor('auto');
    const oracle = pipelineFor('graphql-js');
    const answer = await planned.execute(query, variables, author);
    const expected = await oracle.execute(query, variables, author);
    expect(seen(answer.result)).toEqual(seen(expected.result));
    expect(answer.result.errors).toBeUndefined();
    expect(JSON.stringify(answer.result.data)).toContain(`"reviewId":"${review.reviewId}"`);
    // Breadth-first, a level's point reads go in one BatchGetItem: never more requests than graphql-js.
    expect(answer.requests).toBeLessThanOrEqual(expected.requests);
    expect(await planned.fallbacks()).toEqual({});
  });

  it('runs a mutation planned: its write once, its payload by rounds of reads, without a fall-back', async () => {
    const [first, second] = demoData().products;
    const query = `mutation ($input: PlaceOrderInput!) {
      placeOrder(input: $input) {
        replayed userErrors { code field }
        order { status total { amount } user { userId orderCount } items { quantity product { productId name rating { count } } } }
      }
      refused: placeOrder(input: { userId: "alice", items: [], idempotencyKey: "empty" }) { order { id } userErrors { code field } }
    }`;
    const input = {
      userId: 'alice',
      items: [first, second].map((product) => ({ productId: product!.productId, quantity: 1 })),
      idempotencyKey: `planned-${randomUUID()}`,
    };
    const planned = pipelineFor('auto');
    const answer = await planned.execute(query, { input }, ALICE);
    expect(answer.result.errors).toBeUndefined();
    expect(JSON.stringify(answer.result.data)).toMatch(
      /^\{"placeOrder":\{"replayed":false,"userErrors":\[\],"order":\{"status":"PLACED",.*"refused":\{"order":null,"userErrors":\[\{"code":"INVALID_INPUT"/,
    );
    expect(await planned.fallbacks()).toEqual({});
    // The same order again: the idempotent replay, as graphql-js answers it.
    const oracle = pipelineFor('graphql-js');
    const again = await planned.execute(query, { input }, ALICE);
    const expected = await oracle.execute(query, { input }, ALICE);
    expect(seen(again.result)).toEqual(seen(expected.result));
    expect(JSON.stringify(again.result.data)).toContain('"replayed":true');
    expect(again.requests).toBe(expected.requests);
  });

  it("has graphql-js complete a payload whose field failed, on the write's outcome: the order is placed once", async () => {
    const counted = { transactions: 0 };
    const send = (command: object, options?: object): Promise<unknown> => {
      if (command instanceof TransactWriteCommand) counted.transactions += 1;
      return dynamo.doc.send(command as never, options as never);
    };
    const planned = pipelineFor('auto', Object.create(dynamo.doc, { send: { value: send } }) as DynamoDBDocumentClient);
    // A payload field whose resolver returns a failing promise: the planner stops there (`async`).
    const status = (planned.schema.getType('Order') as GraphQLObjectType).getFields().status!;
    status.resolve = () => Promise.reject(new Error('status failed'));
    const query = `mutation ($input: PlaceOrderInput!) {
      placeOrder(input: $input) { replayed order { orderId status } userErrors { code } }
    }`;
    const input = {
      userId: 'alice',
      items: [{ productId: demoData().products[3]!.productId, quantity: 1 }],
      idempotencyKey: `payload-${randomUUID()}`,
    };
    const answer = await planned.execute(query, { input }, ALICE);
    expect(answer.result.data).toEqual({ placeOrder: { replayed: false, order: null, userErrors: [] } });
    expect(answer.result.errors?.map((error) => error.path)).toEqual([['placeOrder', 'order', 'status']]);
    expect(await planned.fallbacks()).toEqual({ async: 1 });
    expect(counted.transactions).toBe(1);
  });

  it('stops a mutation where graphql-js does: a non-null root field that fails nulls the answer, and no later write runs', async () => {
    const query = `mutation {
      refused: placeOrder(input: { userId: "bob", items: [], idempotencyKey: "k" }) { replayed }
      never: createProduct(input: { name: "x", description: "x", category: "books", price: "1.00", stock: 1 }) { product { productId } }
    }`;
    const planned = pipelineFor('auto');
    const oracle = pipelineFor('graphql-js');
    const answer = await planned.execute(query, {}, ALICE);
    const expected = await oracle.execute(query, {}, ALICE);
    expect(seen(answer.result)).toEqual(seen(expected.result));
    expect(answer.result.data).toBeNull();
    expect(answer.result.errors?.map((error) => error.extensions.code)).toEqual(['FORBIDDEN']);
    expect(await planned.fallbacks()).toEqual({ error: 1 });
  });

  it.each([
    [
      "a mutation's refused write (graphql-js completes the field on the write's outcome)",
      'error',
      'mutation { placeOrder(input: { userId: "bob", items: [], idempotencyKey: "k" }) { order { id } userErrors { code } } }',
      {},
      ALICE,
    ],
    [
      'variables that do not coerce',
      'variables',
      'query ($first: Int) { viewer { orders(first: $first) { edges { node { id } } } } }',
      { first: 'ten' },
      ALICE,
    ],
    ['a read refused by the access rules', 'error', '{ userByEmail(email: "alice@example.com") { id } }', {}, null],
    ['a non-null field whose key is refused', 'error', '{ nodes(ids: ["not-a-global-id"]) { id } }', {}, ALICE],
    [
      'a document without the operation named',
      'operation',
      'query A { viewer { id } } query B { viewer { id } }',
      {},
      ALICE,
    ],
  ] as const)(
    'leaves %s to graphql-js, counted as %s, with the answer graphql-js gives',
    async (_what, why, query, variables, viewer) => {
      const planned = pipelineFor('auto');
      const oracle = pipelineFor('graphql-js');
      const answer = await planned.execute(query, variables, viewer);
      const expected = await oracle.execute(query, variables, viewer);
      expect(seen(answer.result)).toEqual(seen(expected.result));
      expect(await planned.fallbacks()).toEqual({ [why]: 1 });
      expect(await oracle.fallbacks()).toEqual({});
    },
  );

  it('does not send a failed read again when graphql-js answers after it', async () => {
    const order = demoData().orders[0]!;
    const query = `query ($orderId: ID!) { order(orderId: $orderId) { id status } }`;
    const failing = failingKeyReads(dynamo.doc);
    const planned = pipelineFor('auto', failing.doc);
    const answer = await planned.execute(query, { orderId: order.orderId }, ADMIN);
    const alone = failingKeyReads(dynamo.doc);
    const expected = await pipelineFor('graphql-js', alone.doc).execute(query, { orderId: order.orderId }, ADMIN);
    expect(seen(answer.result)).toEqual(seen(expected.result));
    expect(answer.result.errors?.length).toBe(1);
    expect(await planned.fallbacks()).toEqual({ error: 1 });
    expect(failing.counted.keyReads).toBe(1);
    expect(alone.counted.keyReads).toBe(1);
  });
});
