/**
 * graphql-js as the oracle of the planned executor (the one EXECUTOR=auto ships), on generated documents: 10,000 seeded
 * queries built from the schema (test/support/documentGenerator.ts) run through the differential
 * executor (test/support/differentialExecutor.ts, plugged into the pipeline through its executor
 * interface) against the demo data in DynamoDB Local, as four different viewers, with
 * faults injected into resolvers at random depths for a third of them. Every answer of the
 * planned executor must equal graphql-js's (data with its key order, errors with message, path,
 * locations and code, in order, and the DynamoDB requests made); the classes known to differ are
 * left to graphql-js and counted.
 *
 * The table does not change during the run, so an identical DynamoDB call is sent once and its
 * answer handed out again after that (a memo in front of the real client): the executors, not
 * DynamoDB Local, set the pace.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { getOperationAST, GraphQLError, parse, TypeInfo, validate, visit, visitWithTypeInfo } from 'graphql';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { GraphQLFieldResolver, GraphQLObjectType, GraphQLResolveInfo } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Viewer } from '../src/auth/tokens.js';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { CursorCodec } from '../src/db/cursor.js';
import { ensureTable } from '../src/db/ensureTable.js';
import type { GraphQLContext } from '../src/graphql/context.js';
import { toGlobalId } from '../src/graphql/globalId.js';
import { sha256 } from '../src/pipeline/admission/admission.js';
import { PLAN_FALLBACKS } from '../src/pipeline/execution/plan/plannedExecutor.js';
import { createMetrics } from '../src/pipeline/report/metrics.js';
import { createPipeline } from '../src/pipeline/pipeline.js';
import type { Pipeline } from '../src/pipeline/pipeline.js';
import { TrustedDocuments } from '../src/pipeline/documents/trustedDocuments.js';
import { demoCategoryItems, demoItems } from '../src/seed/seed.js';
import { demoData } from '../src/seed/demoData.js';
import { compared, plannedAgainstGraphqlJs } from './support/differentialExecutor.js';
import { createDocumentGenerator, faultAt } from './support/documentGenerator.js';
import { callKey, taped } from './support/dynamoTape.js';
import { EventFanOut } from '../src/graphql/eventFanOut.js';
import type { ArgumentValues, GeneratedDocument } from './support/documentGenerator.js';
import { endpoint, TEST_AUTH, TEST_CURSOR_SECRET } from './support/harness.js';

const DOCUMENTS = 10_000;
const SEED = 20261204;
const IN_FLIGHT = 4;

const VIEWERS: Record<string, Viewer | null> = {
  alice: { userId: 'alice', role: 'customer' },
  bob: { userId: 'bob', role: 'customer' },
  admin: { userId: 'test-admin', role: 'admin' },
  anonymous: null,
};

/** Argument values by argument name: the demo data's keys, others' keys, unknown and forged ones. */
function argumentValues(): ArgumentValues {
  const data = demoData();
  const orderIds = [...data.orders.slice(0, 3), ...data.orders.slice(-2)].map((order) => order.orderId);
  const productIds = data.products.slice(0, 4).map((product) => product.productId);
  const reviewIds = data.reviews.slice(0, 2).map((review) => review.reviewId);
  const ids = [
    toGlobalId('User', 'alice'),
    toGlobalId('User', 'bob'),
    toGlobalId('User', 'nobody'),
    ...orderIds.slice(0, 3).map((id) => toGlobalId('Order', id)),
    toGlobalId('Order', 'missing-order'),
    ...productIds.slice(0, 2).map((id) => toGlobalId('Product', id)),
    toGlobalId('Product', 'missing-product'),
    'not-a-global-id',
    toGlobalId('User', 'bad#key'),
    ...reviewIds.map((id) => toGlobalId('Review', id)),
    toGlobalId('Review', 'missing-review'),
  ];
  return {
    userId: ['alice', 'alice', 'bob', 'nobody', 'bad#key'],
    orderId: [...orderIds, 'missing-order', 'bad id'],
    productId: [...productIds, 'missing-product', 'x'.repeat(70)],
    email: ['alice@example.com', 'bob@example.com', 'nobody@example.com', 'not-an-email'],
    id: ids,
    ids: [
      [ids[0], ids[3]],
      [ids[6], ids[8], ids[9]],
      [],
      [ids[11], ids[0]],
      ids.slice(0, 6),
      [ids[12], ids[7], ids[14]],
    ],
    category: ['electronics', 'books', 'kitchen', 'outdoors', 'missing', 'Bad#Category'],
    first: [1, 2, 3, 5, 20, 0, -1, 101],
    last: [1, 2, 4, 0, 101],
    after: ['forged-cursor'],
    before: ['forged-cursor'],
    status: ['PLACED', 'SHIPPED', 'DELIVERED', 'CANCELLED'],
    placedAfter: ['2026-01-01T00:00:00.000Z', 'yesterday'],
    placedBefore: ['2026-12-31T00:00:00.000Z'],
    namePrefix: ['b', 'Th', '', 'zz'],
    inStock: [true, false],
    minPrice: ['10.00', '1000.00', 'ten'],
    maxPrice: ['50.00', '-1'],
    orderBy: [{ field: 'NAME' }, { field: 'PRICE', direction: 'DESC' }],
    'orderBy:ReviewOrder': ['NEWEST', 'HIGHEST_RATING', 'LOWEST_RATING', 'BEST'],
  };
}

/** The fields a product's reviews added: the generated documents must reach them. */
const REVIEW_FIELDS = new Set([
  'Product.rating',
  'Product.reviews',
  'User.review',
  'Review.product',
  'ReviewConnection.totalCount',
]);

/** Whether `document` selects any of REVIEW_FIELDS. */
function selectsReviewFields(schema: GraphQLSchema, document: DocumentNode): boolean {
  const typeInfo = new TypeInfo(schema);
  let found = false;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType();
        if (parent && REVIEW_FIELDS.has(`${parent.name}.${node.name.value}`)) found = true;
      },
    }),
  );
  return found;
}

const MUTATIONS = 1_000;

/**
 * Inputs by root mutation field, for the generated mutations: writes that succeed, replay
 * (an idempotencyKey again), or are refused (userErrors, and FORBIDDEN or UNAUTHENTICATED for
 * some viewers), on the demo data.
 */
function mutationInputs(): Record<string, readonly unknown[]> {
  const data = demoData();
  const [p0, p1, p2] = data.products.map((product) => product.productId);
  const alicesOrders = data.orders.filter((order) => order.userId === 'alice').map((order) => order.orderId);
  const review = data.reviews[0]!;
  const line = (productId: string | undefined, quantity = 1) => ({ productId, quantity });
  return {
    placeOrder: [
      { userId: 'alice', items: [line(p0), line(p1)], idempotencyKey: 'generated-1' },
      { userId: 'alice', items: [line(p2)], idempotencyKey: 'generated-1' },
      { userId: 'alice', items: [line(p1)], idempotencyKey: 'generated-2' },
      { userId: 'alice', items: [line(p0, 1_000_000)], idempotencyKey: 'generated-3' },
      { userId: 'alice', items: [], idempotencyKey: 'generated-4' },
      { userId: 'bob', items: [line(p2)], idempotencyKey: 'generated-5' },
      { userId: 'alice', items: [line('missing-product')], idempotencyKey: 'generated-6' },
    ],
    cancelOrder: [{ orderId: alicesOrders[0] }, { orderId: alicesOrders[1] }, { orderId: 'missing-order' }],
    updateOrderStatus: [
      { orderId: alicesOrders[2], status: 'SHIPPED' },
      { orderId: 'missing-order', status: 'DELIVERED' },
    ],
    addReview: [
      { productId: p1, rating: 4, title: 'Generated', body: 'A generated review.' },
      { productId: p2, rating: 0, title: 'No stars', body: 'Refused.' },
      { productId: 'missing-product', rating: 3, title: 'Nothing', body: 'Nothing to review.' },
    ],
    updateReview: [
      { reviewId: review.reviewId, expectedVersion: review.version, title: 'Edited' },
      { reviewId: 'missing-review', expectedVersion: 1, rating: 2 },
    ],
    deleteReview: [{ reviewId: 'missing-review' }],
    createUser: [
      { email: 'generated@example.com', name: 'Generated' },
      { userId: 'bob', email: 'b@example.com', name: 'B' },
    ],
    updateUser: [
      { userId: 'alice', expectedVersion: 1, name: 'Alice' },
      { userId: 'bob', expectedVersion: 1, email: 'not-an-email' },
    ],
    createProduct: [{ name: 'Generated', description: 'A product.', category: 'books', price: '1.00', stock: 5 }],
    updateProduct: [
      { productId: p0, expectedVersion: 1, stock: 50 },
      { productId: p1, expectedVersion: 1, price: 'free' },
    ],
  };
}

/** The real client, with each identical call sent once (the table does not change during the run). */
function memoized(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const answers = new Map<string, Promise<unknown>>();
  const send = (command: object, options?: object): Promise<unknown> => {
    const key = callKey(command);
    let answer = answers.get(key);
    if (!answer) {
      answer = doc.send(command as never, options as never);
      answers.set(key, answer);
      answer.catch(() => answers.delete(key));
    }
    return answer.then((output) => structuredClone(output));
  };
  return Object.create(doc, { send: { value: send } }) as DynamoDBDocumentClient;
}

const pathOf = (path: GraphQLResolveInfo['path']): string => {
  const keys: (string | number)[] = [];
  for (let at: GraphQLResolveInfo['path'] | undefined = path; at; at = at.prev) keys.push(at.key);
  return keys.reverse().join('.');
};

/** Puts a fault injector in front of every resolver: it fails where the request's plan says. */
function injectFaults(pipeline: Pipeline, plans: Map<string, { seed: number; rate: number }>): void {
  for (const type of Object.values(pipeline.schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type) || type === pipeline.schema.getMutationType()) continue;
    for (const field of Object.values((type as GraphQLObjectType).getFields())) {
      const resolve = field.resolve as GraphQLFieldResolver<unknown, GraphQLContext> | undefined;
      if (!resolve) continue;
      field.resolve = (source, args, context, info) => {
        const plan = plans.get(context.requestId);
        // Faults arrive asynchronously: a non-null field failing synchronously makes graphql-js
        // abandon its siblings' pending results (their rejections go unhandled), a graphql-js
        // behaviour the server's resolvers avoid.
        switch (plan && faultAt(plan.seed, pathOf(info.path), plan.rate)) {
          case 'coded':
            return Promise.reject(new GraphQLError('Injected: refused', { extensions: { code: 'FORBIDDEN' } }));
          case 'unexpected':
            return Promise.reject(new Error('Injected: an unexpected failure'));
          case 'null':
            return Promise.resolve(null);
          default:
            return resolve(source, args, context, info);
        }
      };
    }
  }
}

describe('the planned executor against graphql-js on generated documents', () => {
  let dynamo: Dynamo;
  let tableName: string;
  let pipeline: Pipeline;
  let metrics: ReturnType<typeof createMetrics>;
  const mismatches: string[] = [];
  const plans = new Map<string, { seed: number; rate: number }>();

  beforeAll(async () => {
    tableName = `t-${randomUUID()}`;
    dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
    await ensureTable(dynamo.client, tableName, endpoint());
    await putItems(dynamo.doc, tableName, [...demoItems(), ...demoCategoryItems()]);
    metrics = createMetrics();
    const data = {
      dynamo: { client: dynamo.client, doc: taped(memoized(dynamo.doc)) },
      tableName,
      cursors: new CursorCodec(TEST_CURSOR_SECRET),
    };
    // The differential executor logs both answers of a mismatch: kept for the failure message.
    const log = pino({ level: 'error' }, { write: (line: string) => void mismatches.push(line) });
    const events = new EventFanOut();
    pipeline = createPipeline({
      data,
      log,
      auth: TEST_AUTH,
      limits: DEFAULT_LIMITS,
      introspection: true,
      persistedOnly: false,
      documents: new TrustedDocuments(),
      events,
      metrics,
      execute: plannedAgainstGraphqlJs({
        data,
        events,
        log,
        budgets: {
          requests: DEFAULT_LIMITS.maxOperationRequests,
          readCapacityUnits: DEFAULT_LIMITS.maxOperationReadUnits,
          entries: DEFAULT_LIMITS.maxResultEntries,
          bytes: DEFAULT_LIMITS.maxResultBytes,
        },
        onFallback: (fallback) => metrics.executorFallbacks.inc({ class: fallback }),
      }),
    });
    injectFaults(pipeline, plans);
  });

  afterAll(async () => {
    await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName }));
    dynamo?.client.destroy();
  });

  const fallbacksSoFar = async (): Promise<Record<string, number>> =>
    Object.fromEntries(
      (await metrics.executorFallbacks.get()).values.map((value) => [String(value.labels.class), value.value]),
    );

  /** Runs `count` documents of `generate` through the differential executor, IN_FLIGHT at a time. */
  async function runGenerated(count: number, generate: () => GeneratedDocument) {
    const counts = {
      documents: 0,
      invalid: 0,
      withErrors: 0,
      withFaults: 0,
      nulledRoot: 0,
      withReviewFields: 0,
      mismatches: 0,
    };
    const started = performance.now();
    let claimed = 0;
    const worker = async () => {
      while (claimed < count) {
        const generated = generate();
        const document = parse(generated.query);
        if (validate(pipeline.schema, document).length > 0) {
          // A literal the schema refuses, or fields that cannot merge: refused before execution.
          counts.invalid += 1;
          continue;
        }
        const number = (claimed += 1);
        const requestId = `generated-${randomUUID()}`;
        if (generated.faults) plans.set(requestId, generated.faults);
        const operation = getOperationAST(document, 'Generated');
        if (!operation) throw new Error(`generated document #${number} has no operation Generated`);
        // What admission would hand forward; the generator's documents bypass its limits on purpose.
        const admitted = {
          ok: true as const,
          document: { document, hash: sha256(generated.query), readsOnlyPublicData: false },
          operation,
          operationName: 'Generated',
          variables: generated.variables,
          cost: 0,
          trusted: false,
        };
        const result = await pipeline.execution.execute(
          admitted,
          pipeline.execution.context(VIEWERS[generated.viewer] ?? null, requestId),
        );
        plans.delete(requestId);
        counts.documents += 1;
        if (generated.faults) counts.withFaults += 1;
        if (selectsReviewFields(pipeline.schema, document)) counts.withReviewFields += 1;
        if (result.errors?.length) counts.withErrors += 1;
        if (result.data === null) counts.nulledRoot += 1;
        if (result.errors?.some((error) => error.extensions.code === 'EXECUTOR_MISMATCH')) {
          counts.mismatches += 1;
          if (counts.mismatches <= 3) mismatches.push(`#${number} ${generated.query} ${JSON.stringify(generated)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    return { ...counts, seconds: Math.round((performance.now() - started) / 1000) };
  }

  it(`answers ${DOCUMENTS} generated documents as graphql-js does`, { timeout: 420_000 }, async () => {
    const generate = createDocumentGenerator(pipeline.schema, argumentValues(), SEED);
    const counts = await runGenerated(DOCUMENTS, () => generate());
    const fallbacks = await fallbacksSoFar();
    console.info(`generated documents: ${JSON.stringify({ ...counts, fallbacks })}`);
    expect(mismatches.slice(0, 6)).toEqual([]);
    expect(counts.mismatches).toBe(0);
    expect(counts.documents).toBe(DOCUMENTS);
    // The generator reaches what it is for: errors, faults, and documents of every fallback class.
    expect(counts.withErrors).toBeGreaterThan(DOCUMENTS / 10);
    expect(counts.withReviewFields).toBeGreaterThan(DOCUMENTS / 20);
    expect(Object.keys(fallbacks).every((name) => (PLAN_FALLBACKS as readonly string[]).includes(name))).toBe(true);
  });

  // After the queries: these write to the table the queries read.
  it(
    `answers ${MUTATIONS} generated mutations as graphql-js does, on their writes' outcomes`,
    { timeout: 300_000 },
    async () => {
      const before = await fallbacksSoFar();
      const generate = createDocumentGenerator(pipeline.schema, argumentValues(), SEED + 1);
      const inputs = mutationInputs();
      const counts = await runGenerated(MUTATIONS, () => generate(inputs));
      const after = await fallbacksSoFar();
      const fallbacks = Object.fromEntries(
        Object.entries(after).map(([name, value]) => [name, value - (before[name] ?? 0)]),
      );
      console.info(`generated mutations: ${JSON.stringify({ ...counts, fallbacks, compared: compared.mutation })}`);
      expect(mismatches.slice(0, 6)).toEqual([]);
      expect(counts.mismatches).toBe(0);
      expect(counts.documents).toBe(MUTATIONS);
      // Compared, not only run: every one the planned executor wrote for.
      expect(compared.mutation).toBeGreaterThan(MUTATIONS * 0.9);
      // Refused writes, failed payload fields and nulled roots, completed by graphql-js on the writes' outcomes.
      expect(counts.withErrors).toBeGreaterThan(MUTATIONS / 10);
      expect(counts.nulledRoot).toBeGreaterThan(0);
      expect(fallbacks.error ?? 0).toBeGreaterThan(0);
    },
  );
});
