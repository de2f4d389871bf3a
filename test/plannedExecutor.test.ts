/**
 * The planned executor (EXECUTOR=auto, src/pipeline/execution/plan/) beside graphql-js, each in a pipeline
 * of its own over the demo data in DynamoDB Local: the same answers (data with its key order,
 * errors), the shape's fewest requests, every execution it leaves to graphql-js counted by why,
 * and a fall-back after a failed read that reads nothing again.
 */
import { randomUUID } from 'node:crypto';
import { BatchGetItemCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Kind, parse } from 'graphql';
import type { ExecutionResult } from 'graphql';
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

/** A document client whose BatchGetItem requests fail, counting them. */
function failingBatchGets(doc: DynamoDBDocumentClient) {
  const counted = { batchGets: 0 };
  const send = (command: object, options?: object): Promise<unknown> => {
    if (command instanceof BatchGetItemCommand) {
      counted.batchGets += 1;
      return Promise.reject(new Error('BatchGetItem failed'));
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
    return { execute, fallbacks };
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

  it.each([
    [
      'a mutation',
      'mutation',
      'mutation { placeOrder(input: { userId: "alice", items: [], idempotencyKey: "k" }) { order { id } userErrors { code } } }',
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
    const failing = failingBatchGets(dynamo.doc);
    const planned = pipelineFor('auto', failing.doc);
    const answer = await planned.execute(query, { orderId: order.orderId }, ADMIN);
    const alone = failingBatchGets(dynamo.doc);
    const expected = await pipelineFor('graphql-js', alone.doc).execute(query, { orderId: order.orderId }, ADMIN);
    expect(seen(answer.result)).toEqual(seen(expected.result));
    expect(answer.result.errors?.length).toBe(1);
    expect(await planned.fallbacks()).toEqual({ error: 1 });
    expect(failing.counted.batchGets).toBe(1);
    expect(alone.counted.batchGets).toBe(1);
  });
});
