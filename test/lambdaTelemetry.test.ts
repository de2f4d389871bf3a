/**
 * The two Lambdas' telemetry, run as handlers in this process: each invocation flushes its spans
 * and OTLP metrics to the collector (a receiver in this process) before it returns, although the
 * batch delay is a minute, and writes CloudWatch EMF lines of the metrics' names and labels.
 * The GraphQL function's placeOrder and the stream function's processing are one trace.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGraphQLLambdaConfig } from '../src/config/index.js';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { createGraphQLHandler } from '../src/lambda/graphql.js';
import type { GraphQLLambdaHandler } from '../src/lambda/graphql.js';
import { streamHandlerFromEnv } from '../src/lambda/streams.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { startTelemetry } from '../src/telemetry/start.js';
import type { Telemetry } from '../src/telemetry/start.js';
import { aProduct, aUser, store } from './support/factories.js';
import { endpoint, TEST_AUTH, TEST_CURSOR_SECRET, tokenFor } from './support/harness.js';
import { OtlpReceiver } from './support/otlpReceiver.js';
import { lambdaEvent, readStream } from './support/streamRecords.js';
import { apiGatewayEvent } from './support/transports.js';
import { PLACE_ORDER } from './support/writes.js';

interface EmfLine {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [key: string]: unknown;
}

const user = aUser();
const product = aProduct({ stock: 50 });
let receiver: OtlpReceiver;
let telemetry: Telemetry | undefined;
let dynamo: Dynamo;
let tableName: string;
let handler: GraphQLLambdaHandler;
let admin: string;
const emf: EmfLine[] = [];

/** A Lambda context with `ms` left before the deadline. */
const contextWith = (ms: number) => ({ getRemainingTimeInMillis: () => ms }) as unknown as Context;

const env = () => ({
  NODE_ENV: 'test',
  DYNAMODB_ENDPOINT: endpoint(),
  TABLE_NAME: tableName,
  CURSOR_SECRET: TEST_CURSOR_SECRET,
  JWT_SECRET: TEST_AUTH.secret as string,
  LOG_LEVEL: 'error',
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  // Only a flush exports within the test: the batch and the metric interval are a minute.
  OTEL_BSP_SCHEDULE_DELAY: '60000',
  OTEL_METRIC_EXPORT_INTERVAL: '60000',
});

beforeAll(async () => {
  receiver = await new OtlpReceiver().start();
  tableName = `lambda-otel-${randomUUID()}`;
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  await ensureTable(dynamo.client, tableName, endpoint());
  await store(dynamo.doc, tableName, { users: [user], products: [product] });
  const config = loadGraphQLLambdaConfig(env());
  telemetry = await startTelemetry(config.telemetry, 'tablegraph-graphql-lambda');
  handler = createGraphQLHandler(config, { telemetry, writeEmf: (line) => emf.push(JSON.parse(line) as EmfLine) });
  admin = `Bearer ${await tokenFor('lambda-admin', 'admin')}`;
});
afterAll(async () => {
  await telemetry?.shutdown();
  await receiver?.stop();
  dynamo?.client.destroy();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The EMF lines written by `run`, and what it returned. */
async function linesOf<T>(run: () => Promise<T>): Promise<{ result: T; lines: EmfLine[] }> {
  const before = emf.length;
  const result = await run();
  return { result, lines: emf.slice(before) };
}

const metricOf = (lines: EmfLine[], name: string, labels: Record<string, string> = {}) =>
  lines.find(
    (line) =>
      line._aws.CloudWatchMetrics[0]?.Metrics[0]?.Name === name &&
      Object.entries(labels).every(([key, value]) => line[key] === value),
  );

describe('the GraphQL Lambda', () => {
  it('has exported its spans and metrics when the invocation returns', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const query = JSON.stringify({ query: '{ product(productId: "' + product.productId + '") { name } }' });
    const response = await handler(
      apiGatewayEvent(query, { authorization: admin, traceparent: `00-${traceId}-${parentId}-01` }),
      contextWith(10_000),
    );
    expect(response.statusCode).toBe(200);
    // No waiting: the flush before the return sent them.
    const spans = receiver.trace(traceId);
    const http = spans.find((span) => span.name === 'POST /graphql');
    expect(http).toMatchObject({ parentSpanId: parentId, service: 'tablegraph-graphql-lambda' });
    expect(http?.attributes).toMatchObject({ 'http.response.status_code': 200, 'url.scheme': 'https' });
    expect(spans.find((span) => span.name === 'query')?.parentSpanId).toBe(http?.spanId);
    expect(spans.some((span) => span.attributes['db.system.name'] === 'aws.dynamodb')).toBe(true);
    expect(receiver.metricNames).toContain('graphql_request_duration_seconds');
    expect(receiver.metricNames).toContain('dynamodb_requests_total');
  });

  it('writes EMF lines with the metrics’ names and bounded labels, each counter by what it grew', async () => {
    const query = JSON.stringify({ query: '{ product(productId: "' + product.productId + '") { name } }' });
    const invoke = () => handler(apiGatewayEvent(query, { authorization: admin }), contextWith(10_000));
    await invoke();
    const { lines } = await linesOf(invoke);
    for (const line of lines) {
      const [directive] = line._aws.CloudWatchMetrics;
      expect(directive?.Namespace).toBe('tablegraph');
      expect(line._aws.Timestamp).toBeGreaterThan(Date.now() - 60_000);
      // Every dimension is a field of the line, and the metric's value is one too.
      for (const dimension of directive?.Dimensions[0] ?? []) expect(typeof line[dimension]).toBe('string');
      expect(line[directive?.Metrics[0]?.Name ?? '']).toBeDefined();
      expect(line.service).toBe('tablegraph-graphql-lambda');
    }
    const duration = metricOf(lines, 'graphql_request_duration_seconds', { operation: 'other' });
    expect(duration?._aws.CloudWatchMetrics[0]).toMatchObject({
      Dimensions: [['service', 'operation']],
      Metrics: [{ Name: 'graphql_request_duration_seconds', Unit: 'Seconds' }],
    });
    // One request in this invocation: one value, its duration.
    expect(duration?.graphql_request_duration_seconds).toEqual([expect.any(Number)]);
    const reads = metricOf(lines, 'dynamodb_requests_total', { outcome: 'ok' });
    expect(reads?._aws.CloudWatchMetrics[0]).toMatchObject({
      Dimensions: [['service', 'operation', 'outcome']],
      Metrics: [{ Name: 'dynamodb_requests_total', Unit: 'Count' }],
    });
    // The second invocation's own calls, not the running total of both.
    expect(reads?.dynamodb_requests_total).toBe(1);
    // No process metrics in a function's log.
    expect(lines.some((line) => String(line._aws.CloudWatchMetrics[0]?.Metrics[0]?.Name).startsWith('process_'))).toBe(
      false,
    );
  });

  it('is one trace with the stream function’s processing of the order', async () => {
    const traceId = hex(16);
    const body = JSON.stringify({
      query: PLACE_ORDER,
      variables: {
        input: {
          userId: user.userId,
          idempotencyKey: randomUUID(),
          items: [{ productId: product.productId, quantity: 1 }],
        },
      },
    });
    const placed = await handler(
      apiGatewayEvent(body, { authorization: admin, traceparent: `00-${traceId}-${hex(8)}-01` }),
      contextWith(10_000),
    );
    const orderId = (JSON.parse(placed.body ?? '{}') as { data?: { placeOrder?: { order?: { orderId: string } } } })
      .data?.placeOrder?.order?.orderId;
    expect(orderId).toBeDefined();
    const streams = createStreamsClient({ endpoint: endpoint(), region: 'us-east-1' });
    const { records, streamArn } = await readStream(dynamo.client, streams, tableName);
    const inserted = records.filter((r) => r.eventName === 'INSERT' && r.dynamodb?.Keys?.PK?.S === `ORDER#${orderId}`);
    expect(inserted).toHaveLength(1);
    const lambda = await streamHandlerFromEnv(env(), {
      telemetry,
      writeEmf: (line) => emf.push(JSON.parse(line) as EmfLine),
    });
    try {
      const { result, lines } = await linesOf(() =>
        lambda.handler(lambdaEvent(inserted, streamArn), contextWith(10_000)),
      );
      expect(result).toEqual({ batchItemFailures: [] });
      const operation = receiver.trace(traceId).find((span) => span.name === 'mutation');
      const processing = receiver.trace(traceId).find((span) => span.name === 'process ORDER_PLACED');
      expect(processing).toMatchObject({ parentSpanId: operation?.spanId, kind: 5 }); // CONSUMER
      expect(processing?.attributes).toMatchObject({
        'messaging.system': 'aws_dynamodb_streams',
        'tablegraph.event.topic': `order:${orderId}`,
      });
      expect(metricOf(lines, 'tablegraph_stream_records_total')).toMatchObject({
        service: 'tablegraph-stream-lambda',
        tablegraph_stream_records_total: 1,
      });
      expect(
        metricOf(lines, 'tablegraph_stream_events_published_total')?.tablegraph_stream_events_published_total,
      ).toBe(1);
      expect(metricOf(lines, 'dynamodb_requests_total', { operation: 'TransactWriteItems' })).toBeDefined();
    } finally {
      await lambda.close();
      streams.destroy();
    }
  });
});
