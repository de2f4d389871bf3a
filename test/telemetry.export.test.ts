/**
 * What leaves the process besides spans, and what happens when nothing can leave:
 * - the Prometheus metrics go over OTLP with the same names, labels and values (decoded from
 *   protobuf by the receiver in this process);
 * - a collector that refuses connections, or takes them and never answers, neither slows nor
 *   fails a request: the export queue stays bounded, and what does not fit is dropped and
 *   counted (`otel_spans_dropped_total`);
 * - a Lambda invocation waits for such a collector no longer than TELEMETRY_FLUSH_TIMEOUT_MS;
 * - resolver spans only with TRACE_RESOLVERS.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { loadGraphQLLambdaConfig, loadServerConfig } from '../src/config/index.js';
import { freePort } from '../src/db/local.js';
import { createGraphQLHandler } from '../src/lambda/graphql.js';
import { startTelemetry } from '../src/telemetry/start.js';
import type { Telemetry } from '../src/telemetry/start.js';
import { aProduct, store } from './support/factories.js';
import { endpoint, startTestServer, TEST_AUTH, TEST_CURSOR_SECRET } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { OtlpReceiver } from './support/otlpReceiver.js';
import { apiGatewayEvent } from './support/transports.js';

let telemetry: Telemetry | undefined;
let server: TestServer | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await server?.stop();
  server = undefined;
  await telemetry?.shutdown();
  telemetry = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A collector that accepts connections and never answers. */
async function blackHole(): Promise<string> {
  const sockets = new Set<net.Socket>();
  const hole = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.resume();
  });
  await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => hole.close(resolve));
  });
  return `http://127.0.0.1:${(hole.address() as AddressInfo).port}`;
}

/** A URL on which nothing listens. */
const refused = async (): Promise<string> => `http://127.0.0.1:${await freePort()}`;

const metricValue = (text: string, name: string): number =>
  text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);

describe('OTLP metrics', () => {
  it('exports the /metrics registry with the same names, labels and values', async () => {
    const receiver = await new OtlpReceiver().start();
    cleanups.push(() => receiver.stop());
    telemetry = await startTelemetry(
      loadServerConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_METRIC_EXPORT_INTERVAL: '60000',
      }).telemetry,
      'tablegraph-test',
    );
    server = await startTestServer();
    const product = aProduct();
    await store(server.dynamo.doc, server.tableName, { products: [product] });
    for (let i = 0; i < 3; i++) {
      const response = await server.gql('query ($id: ID!) { product(productId: $id) { name } }', {
        id: product.productId,
      });
      expect(response.errors).toBeUndefined();
    }
    const scraped = await (await fetch(server.url.replace('/graphql', '/metrics'))).text();
    await telemetry?.flush();

    const durations = receiver.points.filter(
      (point) => point.metric === 'graphql_request_duration_seconds' && point.attributes.operation === 'other',
    );
    expect(durations.at(-1)).toMatchObject({ kind: 'histogram', count: 3, service: 'tablegraph-test' });
    expect(durations.at(-1)?.value).toBeCloseTo(
      metricValue(scraped, 'graphql_request_duration_seconds_sum{operation="other"}'),
      6,
    );
    const calls = receiver.points.filter((point) => point.metric === 'dynamodb_requests_total');
    const series = (labels: Record<string, unknown>) =>
      `dynamodb_requests_total{operation="${String(labels.operation)}",outcome="${String(labels.outcome)}"}`;
    const scrapedSeries = scraped
      .split('\n')
      .filter((line) => line.startsWith('dynamodb_requests_total{'))
      .map((line) => line.split(' ')[0]);
    // The same series as the scrape (the registry poller may have read once more since).
    expect(calls.map((call) => series(call.attributes)).sort()).toEqual(scrapedSeries.sort());
    for (const call of calls) {
      expect(call.kind).toBe('sum');
      expect(call.value).toBeGreaterThanOrEqual(metricValue(scraped, series(call.attributes)));
    }
    expect(receiver.metricNames).toContain('dynamodb_consumed_capacity_units_total');
  });
});

describe('a collector that cannot be reached', () => {
  const QUEUE = 16;
  // Far longer than 30 requests take even on a loaded machine, so a request that waited for an
  // export could not pass the bound below.
  const EXPORT_TIMEOUT_MS = 15_000;

  it.each([
    ['refuses connections', refused],
    ['never answers', blackHole],
  ])(
    'neither slows nor fails a request when it %s: spans beyond the queue are dropped and counted',
    async (_, url) => {
      telemetry = await startTelemetry(
        loadServerConfig({
          OTEL_EXPORTER_OTLP_ENDPOINT: await url(),
          OTEL_METRICS_EXPORTER: 'none',
          OTEL_BSP_SCHEDULE_DELAY: '10',
          OTEL_BSP_MAX_QUEUE_SIZE: String(QUEUE),
          OTEL_EXPORTER_OTLP_TIMEOUT: String(EXPORT_TIMEOUT_MS),
        }).telemetry,
        'tablegraph-test',
      );
      server = await startTestServer();
      const requests = 30;
      const started = performance.now();
      const responses = await Promise.all(
        Array.from({ length: requests }, () => (server as TestServer).gql('{ __typename }')),
      );
      const elapsed = performance.now() - started;
      for (const response of responses) expect(response).toMatchObject({ data: { __typename: 'Query' } });
      // Every request answered before a single export could have timed out: none waited for one.
      expect(elapsed).toBeLessThan(EXPORT_TIMEOUT_MS);
      // Each request made an HTTP and an operation span; at most QUEUE of them wait for export.
      expect(telemetry?.droppedSpans()).toBeGreaterThanOrEqual(requests * 2 - QUEUE);
      // Exports that fail now may still be counted: the scrape reads a value between two readings.
      const before = telemetry?.droppedSpans() ?? 0;
      const scraped = await (await fetch(server.url.replace('/graphql', '/metrics'))).text();
      const dropped = metricValue(scraped, 'otel_spans_dropped_total');
      expect(dropped).toBeGreaterThanOrEqual(before);
      expect(dropped).toBeLessThanOrEqual(telemetry?.droppedSpans() ?? 0);
    },
    60_000,
  );

  it('holds a Lambda invocation no longer than TELEMETRY_FLUSH_TIMEOUT_MS', async () => {
    const FLUSH_MS = 300;
    const config = loadGraphQLLambdaConfig({
      NODE_ENV: 'test',
      DYNAMODB_ENDPOINT: endpoint(),
      TABLE_NAME: 'not-read',
      CURSOR_SECRET: TEST_CURSOR_SECRET,
      JWT_SECRET: TEST_AUTH.secret as string,
      LOG_LEVEL: 'silent',
      OTEL_EXPORTER_OTLP_ENDPOINT: await blackHole(),
      OTEL_EXPORTER_OTLP_TIMEOUT: '10000',
      TELEMETRY_FLUSH_TIMEOUT_MS: String(FLUSH_MS),
    });
    server = await startTestServer();
    telemetry = await startTelemetry(config.telemetry, 'tablegraph-graphql-lambda');
    const handler = createGraphQLHandler({ ...config, tableName: server.tableName }, { telemetry });
    const context = { getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
    const invoke = () => handler(apiGatewayEvent(JSON.stringify({ query: '{ __typename }' })), context);
    await invoke(); // the cold start (runtime, schema check) is not what is measured
    const started = performance.now();
    const response = await invoke();
    const elapsed = performance.now() - started;
    expect(response.statusCode).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(FLUSH_MS - 5); // it did wait for the flush...
    expect(elapsed).toBeLessThan(FLUSH_MS + 5000); // ...but not for the export's 10 s
  });
});

describe('resolver spans', () => {
  it.each([
    ['off by default', {}, 0],
    ['one per resolved field with TRACE_RESOLVERS=true', { TRACE_RESOLVERS: 'true' }, 1],
  ])('are %s', async (_, env: Record<string, string>, expected) => {
    const receiver = await new OtlpReceiver().start();
    cleanups.push(() => receiver.stop());
    telemetry = await startTelemetry(
      loadServerConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_METRICS_EXPORTER: 'none',
        OTEL_BSP_SCHEDULE_DELAY: '60000',
        ...env,
      }).telemetry,
      'tablegraph-test',
    );
    server = await startTestServer();
    const product = aProduct();
    await store(server.dynamo.doc, server.tableName, { products: [product] });
    const response = await server.gql('query ($id: ID!) { product(productId: $id) { name } }', {
      id: product.productId,
    });
    expect(response.errors).toBeUndefined();
    await telemetry?.flush();
    const operation = receiver.spans.find((span) => span.name === 'query');
    const resolvers = receiver.spans.filter((span) => span.name === 'Query.product');
    expect(operation).toBeDefined();
    expect(resolvers).toHaveLength(expected);
    for (const span of resolvers) {
      expect(span.parentSpanId).toBe(operation?.spanId);
      expect(span.attributes).toMatchObject({ 'graphql.field.name': 'product', 'graphql.field.path': 'product' });
    }
  });
});
