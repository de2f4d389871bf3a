/**
 * The fleet's image (deploy/containerImage.ts), run as ECS runs it but without Docker: `node
 * server.mjs` and `node consumer.mjs` in the staged build context, outside the project (nothing
 * resolves from node_modules), in production mode, with the secrets in the environment as ECS
 * injects them, against DynamoDB Local and a redis-server. The Dockerfile is checked against the
 * folder it builds from instead.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedContainerBundle, containerCommand } from '../deploy/containerImage.js';
import { signToken } from '../src/auth/tokens.js';
import { putItems } from '../src/db/batchWrite.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { freePort } from '../src/db/local.js';
import { demoItems } from '../src/seed/seed.js';
import type { ChildServer } from './support/childServers.js';
import { subscribe } from './support/fanOut.js';
import { endpoint, TEST_AUTH } from './support/harness.js';
import { postGraphQL } from './support/load.js';
import { RedisServer } from './support/redisServer.js';
import { runBundle } from './support/serverProcess.js';
import type { NodeProcess } from './support/serverProcess.js';
import { PLACE_ORDER } from './support/writes.js';

const JWT_SECRET = 'container-test-jwt-secret-of-more-than-32-characters';
const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
const tableName = `image-${randomUUID()}`;
const processes: NodeProcess[] = [];
const clients: Client[] = [];
let dir: string;
let redis: RedisServer;

/** What ECS gives a task of the stack, with DynamoDB Local for DynamoDB and the secrets as values. */
const taskEnv = () => ({
  NODE_ENV: 'production',
  DYNAMODB_ENDPOINT: endpoint(),
  TABLE_NAME: tableName,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  REDIS_URL: redis.url,
  REDIS_SIGNING_SECRET: 'container-test-redis-signing-secret-of-48-characters',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
});

beforeAll(async () => {
  dir = cachedContainerBundle().dir;
  [redis] = await Promise.all([RedisServer.start(), ensureTable(dynamo.client, tableName, endpoint())]);
  await putItems(dynamo.doc, tableName, demoItems());
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.dispose();
  await Promise.all(
    processes.map((node) => {
      node.child.kill('SIGKILL');
      return node.exited;
    }),
  );
  await redis?.kill();
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
});

describe('the fleet image', () => {
  it('copies every file of its build context, onto Node.js 24, and runs the server unless told otherwise', () => {
    const dockerfile = readFileSync(path.join(dir, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM \S+\/node:24-\S+$/m);
    const copied = [...dockerfile.matchAll(/^COPY (.+) \S+$/gm)].flatMap(([, sources]) => (sources ?? '').split(' '));
    const staged = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name !== 'Dockerfile')
      .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
    expect(copied.sort()).toEqual(staged.sort());
    expect(JSON.parse(/^CMD (.+)$/m.exec(dockerfile)?.[1] ?? 'null')).toEqual(containerCommand('server'));
  });

  it('serves GraphQL from the server bundle, with order events from the consumer bundle over Redis', async () => {
    const port = await freePort();
    const server = runBundle(path.join(dir, 'server.mjs'), {
      ...taskEnv(),
      PORT: String(port),
      STREAM_CONSUMER: 'false',
      CURSOR_SECRET: 'container-test-cursor-secret-of-more-than-32-characters',
      JWT_SECRET,
    });
    const consumer = runBundle(path.join(dir, 'consumer.mjs'), {
      ...taskEnv(),
      CONSUMER_PORT: '0',
      STREAM_POLL_MS: '50',
    });
    processes.push(server, consumer);
    await Promise.all([
      server.waitForLog((line) => line.msg.startsWith('tablegraph ready at'), 'the ready line'),
      consumer.waitForLog((line) => line.msg.startsWith('tablegraph consumer ready'), 'the ready line'),
    ]);
    const origin = `http://127.0.0.1:${port}`;
    const api: ChildServer = { node: server, port, origin, url: `${origin}/graphql` };
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    expect((await fetch(`${origin}/readyz`)).status).toBe(200);

    const alice = await signToken({ userId: 'alice', role: 'customer' }, { ...TEST_AUTH, secret: JWT_SECRET });
    const subscriber = await subscribe(
      clients,
      'alice',
      api,
      alice,
      'subscription { orderEvents { order { orderId } } }',
    );
    const placed = await postGraphQL(api.url, `Bearer ${alice}`, PLACE_ORDER, {
      input: { userId: 'alice', idempotencyKey: randomUUID(), items: [{ productId: 'headphones-x1', quantity: 1 }] },
    });
    const orderId = (placed.body?.data as { placeOrder: { order: { orderId: string } } }).placeOrder.order.orderId;
    await subscriber.waitFor([orderId], 30_000);
    // Production mode: no playground build was attempted (the image has no sources to build it from).
    expect(server.stderr()).toBe('');
    expect(server.logs.filter((line) => line.level >= 50)).toEqual([]);
  }, 90_000);
});
