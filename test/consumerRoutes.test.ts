/**
 * The standalone consumer (`npm run consumer`) serves /metrics through the API's handler: the
 * same METRICS_TOKEN and loopback rule (the rule's cases are tested with the API's routes).
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { endpoint } from './support/harness.js';

const TOKEN = 'a-metrics-token-for-the-consumer';
const children = new ChildServers();
const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
const tableName = `consumer-routes-${randomUUID()}`;
let consumer: ChildServer;

beforeAll(async () => {
  await ensureTable(dynamo.client, tableName, endpoint());
  consumer = await children.startConsumer(endpoint(), tableName, { METRICS_TOKEN: TOKEN, LEASE_TTL_MS: '3000' });
}, 60_000);

afterAll(async () => {
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
