/** /healthz, /readyz, /metrics and request ids, on a live server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';

let server: TestServer;
let base: string;
beforeAll(async () => {
  server = await startTestServer();
  base = new URL(server.url).origin;
  await putItems(server.dynamo.doc, server.tableName, demoItems());
});
afterAll(() => server.stop());

const metricsText = async () => (await fetch(`${base}/metrics`)).text();
/** The value of one sample line, e.g. sample(text, 'graphql_errors_total{code="BAD_USER_INPUT"}'). */
const sample = (text: string, series: string): number => {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe('health', () => {
  it('says the process is alive at /healthz', async () => {
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('says ready at /readyz when DynamoDB answers and the table is active', async () => {
    const response = await fetch(`${base}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ready',
      details: { eventBus: { kind: 'in-process', status: 'up' } },
    });
  });

  it('says not ready, with 503, when the table does not exist', async () => {
    const other = await startTestServer();
    try {
      await other.dynamo.client.send(
        new (await import('@aws-sdk/client-dynamodb')).DeleteTableCommand({ TableName: other.tableName }),
      );
      const response = await fetch(`${new URL(other.url).origin}/readyz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({
        status: 'not ready',
        reason: 'the table does not exist',
        details: { eventBus: { kind: 'in-process', status: 'up' } },
      });
    } finally {
      await other.stop().catch(() => undefined);
    }
  });
});

describe('metrics', () => {
  it('counts request durations by operation name and DynamoDB calls by operation', async () => {
    const before = await metricsText();
    // A name of the persisted-documents manifest: other names are labelled "other". `last` is
    // not the first page newest first: the user and the page are two requests.
    await server.gql('query UserOrdersPage { user(userId: "alice") { orders(last: 3) { nodes { orderId } } } }');
    const after = await metricsText();
    const count = 'graphql_request_duration_seconds_count{operation="UserOrdersPage"}';
    expect(sample(after, count) - sample(before, count)).toBe(1);
    for (const operation of ['GetItem', 'Query']) {
      const series = `dynamodb_requests_total{operation="${operation}",outcome="ok"}`;
      expect(sample(after, series) - sample(before, series)).toBe(1);
    }
    expect(sample(after, 'dynamodb_consumed_capacity_units_total{operation="Query",kind="read"}')).toBeGreaterThan(0);
  });

  it('counts errors by code', async () => {
    const series = 'graphql_errors_total{code="BAD_USER_INPUT"}';
    const before = sample(await metricsText(), series);
    await server.gql('{ user(userId: "bad#id") { userId } }');
    expect(sample(await metricsText(), series) - before).toBe(1);
  });

  it('exposes process metrics in the Prometheus text format', async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toMatch(/^process_resident_memory_bytes \d+/m);
  });
});

describe('request ids', () => {
  it('echoes a sane x-request-id and makes one up otherwise', async () => {
    const ask = (id?: string) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(id ? { 'x-request-id': id } : {}) },
        body: JSON.stringify({ query: '{ product(productId: "tent-2p") { name } }' }),
      });
    expect((await ask('trace-123')).headers.get('x-request-id')).toBe('trace-123');
    expect((await ask()).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await ask('bad id with spaces')).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
