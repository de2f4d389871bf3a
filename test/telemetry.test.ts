/**
 * Traces as a collector receives them: the server in this process exports OTLP/HTTP protobuf
 * to a receiver in this process (test/support/otlpReceiver.ts), which decodes it with the
 * OpenTelemetry proto definitions. One query's spans follow the semantic conventions, carry
 * the consumed capacity and the request's totals, and honour an incoming `traceparent`; a
 * cancelled transaction names each reason by its action.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerConfig } from '../src/config/index.js';
import { productKey } from '../src/table/keys.js';
import { startTelemetry } from '../src/telemetry/start.js';
import type { Telemetry } from '../src/telemetry/start.js';
import { aProduct, aUser, store } from './support/factories.js';
import { startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { OtlpReceiver } from './support/otlpReceiver.js';
import type { ReceivedSpan } from './support/otlpReceiver.js';
import { PLACE_ORDER } from './support/writes.js';

const SERVER = 2;
const CLIENT = 3;

/** Runs just before the next TransactWriteItems goes to DynamoDB (then forgotten). */
let beforeTransaction: (() => Promise<void>) | undefined;
function hookTransactions(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' && beforeTransaction) {
        const hook = beforeTransaction;
        beforeTransaction = undefined;
        await hook();
      }
      return next(args);
    },
    { step: 'initialize', name: 'testBeforeTransaction' },
  );
}

let receiver: OtlpReceiver;
let telemetry: Telemetry | undefined;
let server: TestServer;
const user = aUser();
const product = aProduct({ stock: 5 });

beforeAll(async () => {
  receiver = await new OtlpReceiver().start();
  const config = loadServerConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '20',
    OTEL_METRICS_EXPORTER: 'none',
  });
  telemetry = await startTelemetry(config.telemetry, 'tablegraph-test');
  server = await startTestServer({ configureClient: hookTransactions });
  await store(server.dynamo.doc, server.tableName, { users: [user], products: [product] });
});
afterAll(async () => {
  await server?.stop();
  await telemetry?.shutdown();
  await receiver?.stop();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The spans of the trace `traceId` once its HTTP span (the last to end) has arrived. */
async function traceOf(traceId: string): Promise<ReceivedSpan[]> {
  await receiver.waitFor(
    () => receiver.trace(traceId).find((span) => span.kind === SERVER && span.name.startsWith('POST')),
    `HTTP span of trace ${traceId}`,
  );
  return receiver.trace(traceId);
}

describe('traces of the API', () => {
  it('exports one query as HTTP, operation and DynamoDB spans under the incoming traceparent', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const response = await server.gql(
      'query ($id: ID!) { product(productId: $id) { name stock } }',
      { id: product.productId },
      { traceparent: `00-${traceId}-${parentId}-01` },
    );
    expect(response.errors).toBeUndefined();
    const spans = await traceOf(traceId);
    const http = spans.find((span) => span.kind === SERVER);
    const operation = spans.find((span) => span.name === 'query');
    const dynamo = spans.filter((span) => span.attributes['db.system.name'] === 'aws.dynamodb');
    expect(http).toMatchObject({
      name: 'POST /graphql',
      parentSpanId: parentId,
      attributes: { 'http.request.method': 'POST', 'http.route': '/graphql', 'http.response.status_code': 200 },
    });
    expect(operation).toMatchObject({
      parentSpanId: http?.spanId,
      attributes: {
        'graphql.operation.type': 'query',
        // Not a persisted document: the client's name never becomes the span's.
        'graphql.operation.name': 'other',
        'tablegraph.graphql.document.trusted': false,
      },
    });
    expect(operation?.attributes['tablegraph.graphql.document.sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(dynamo.length).toBeGreaterThan(0);
    for (const span of dynamo) {
      expect(span).toMatchObject({ kind: CLIENT, parentSpanId: operation?.spanId });
      expect(span.attributes).toMatchObject({
        'db.operation.name': span.name,
        'rpc.system': 'aws-api',
        'rpc.service': 'DynamoDB',
        'aws.dynamodb.table_names': [server.tableName],
        'tablegraph.dynamodb.attempts': 1,
      });
      // Every DynamoDB span carries what the call consumed.
      expect(span.attributes['aws.dynamodb.consumed_capacity']).toEqual([expect.stringContaining('CapacityUnits')]);
      expect(span.attributes['tablegraph.dynamodb.read_capacity_units']).toBeGreaterThan(0);
    }
    // Every span of the request carries the request's totals, the same as extensions.cost.
    const cost = response.extensions?.cost?.dynamodb;
    for (const span of [http, operation, ...dynamo]) {
      expect(span?.attributes).toMatchObject({
        'tablegraph.request.dynamodb.requests': cost?.requests,
        'tablegraph.request.dynamodb.read_capacity_units': cost?.readCapacityUnits,
        'tablegraph.request.dynamodb.write_capacity_units': 0,
      });
    }
  });

  it('names each cancellation reason of a failed transaction by its action', async () => {
    const traceId = hex(16);
    // The stock goes between placeOrder's read and its transaction: the stock condition fails.
    beforeTransaction = async () => {
      await server.dynamo.doc.send(
        new UpdateCommand({
          TableName: server.tableName,
          Key: productKey(product.productId),
          UpdateExpression: 'SET stock = :zero',
          ExpressionAttributeValues: { ':zero': 0 },
        }),
      );
    };
    const response = await server.gql(
      PLACE_ORDER,
      { input: { userId: user.userId, idempotencyKey: 'k1', items: [{ productId: product.productId, quantity: 2 }] } },
      { traceparent: `00-${traceId}-${hex(8)}-01` },
    );
    expect(response.data?.placeOrder).toMatchObject({ order: null });
    const spans = await traceOf(traceId);
    const transaction = spans.find((span) => span.name === 'TransactWriteItems');
    expect(transaction?.status.code).toBe(2); // ERROR
    expect(transaction?.attributes).toMatchObject({
      'error.type': 'TransactionCanceledException',
      'tablegraph.dynamodb.cancelled_actions': ['stock:0'],
      'tablegraph.dynamodb.read_capacity_units': 0,
      'tablegraph.dynamodb.write_capacity_units': 0,
      'aws.dynamodb.consumed_capacity': [],
    });
    expect(transaction?.attributes['tablegraph.dynamodb.cancellation_reasons']).toEqual(
      expect.arrayContaining(['stock:0=ConditionalCheckFailed', 'details=None']),
    );
    expect(spans.find((span) => span.name === 'mutation')?.attributes['graphql.operation.type']).toBe('mutation');
  });

  it('starts a trace of its own for a malformed traceparent', async () => {
    const before = new Set(receiver.spans.map((span) => span.traceId));
    const response = await server.gql('{ __typename }', {}, { traceparent: '00-zz-nope-01' });
    expect(response.errors).toBeUndefined();
    const http = await receiver.waitFor(
      () => receiver.spans.find((span) => span.kind === SERVER && !before.has(span.traceId)),
      'a new trace',
    );
    expect(http.parentSpanId).toBe('');
  });
});
