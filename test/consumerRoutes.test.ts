/**
 * The standalone consumer (`npm run consumer`) serves /healthz, /readyz and /metrics through the
 * API's handlers: the same health rules (the health cases run on both), and the same
 * METRICS_TOKEN and loopback rule (the rule's cases are tested with the API's routes).
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { endpoint, startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';

const TOKEN = 'a-metrics-token-for-the-consumer';
const children = new ChildServers();
const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
const tableName = `consumer-routes-${randomUUID()}`;
let consumer: ChildServer;
let api: TestServer;

beforeAll(async () => {
  await ensureTable(dynamo.client, tableName, endpoint());
  [consumer, api] = await Promise.all([
    children.startConsumer(endpoint(), tableName, { METRICS_TOKEN: TOKEN, LEASE_TTL_MS: '3000' }),
    startTestServer({ tableName }),
  ]);
}, 60_000);

afterAll(async () => {
  await api.stop();
  await children.killAll();
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
});

describe("the consumer's /metrics", () => {
  it('refuses a wrong token with 401 and nothing rendered', async () => {
    const response = await fetch(`${consumer.origin}/metrics`, { headers: { authorization: 'Bearer wrong' } });
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('metrics need Authorization: Bearer <METRICS_TOKEN>\n');
  });

  it('serves the right token, and a loopback client without one', async () => {
    for (const headers of [{ authorization: `Bearer ${TOKEN}` }, {}] as Record<string, string>[]) {
      const response = await fetch(`${consumer.origin}/metrics`, { headers });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('tablegraph_stream_leases_held');
    }
  });
});

const SERVERS = [
  ['the API', () => new URL(api.url).origin, {}],
  // The consumer has no Redis here: its events go nowhere, which does not make it unready.
  ['the consumer', () => consumer.origin, { leasesHeld: 1, owner: expect.any(String) }],
] as const;

describe.each(SERVERS)('health of %s', (_name, origin, own) => {
  it('says the process is alive at /healthz, never cached', async () => {
    const response = await fetch(`${origin()}/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('says ready at /readyz when DynamoDB answers and the table is active, with its details', async () => {
    const response = await fetch(`${origin()}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ready',
      details: { eventBus: { kind: 'in-process', status: 'up' }, ...own },
    });
  });

  it.each(['POST', 'DELETE'])('answers %s with 404', async (method) => {
    expect((await fetch(`${origin()}/healthz`, { method })).status).toBe(404);
  });
});
