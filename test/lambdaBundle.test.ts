/**
 * The Lambda bundles the stack deploys (deploy/bundle.ts), run as Lambda runs them: a fresh
 * node process imports `index.mjs` from a folder outside the project (so nothing resolves from
 * node_modules) and calls `handler`. They talk to DynamoDB Local; the secrets come over
 * Secrets Manager's HTTP API from a local endpoint (AWS_ENDPOINT_URL_SECRETS_MANAGER), since no
 * Secrets Manager runs offline.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedBundle } from '../deploy/bundle.js';
import { signToken } from '../src/auth/tokens.js';
import { putItems } from '../src/db/batchWrite.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { demoItems } from '../src/seed/seed.js';
import { findStreamArn, listShards } from '../src/streams/shards.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { endpoint, TEST_AUTH } from './support/harness.js';

const CURSOR_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:CursorSecret-AbCdEf';
const JWT_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:JwtSecret-GhIjKl';
const SECRETS: Record<string, string> = {
  [CURSOR_ARN]: 'bundle-test-cursor-secret-of-more-than-32-characters',
  [JWT_ARN]: 'bundle-test-jwt-secret-of-more-than-32-characters',
};

let secretsServer: Server;
const secretRequests: string[] = [];
const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
const streams = createStreamsClient({ endpoint: endpoint(), region: 'us-east-1' });
const tableName = `t-${randomUUID()}`;

beforeAll(async () => {
  // Secrets Manager's JSON protocol: POST with X-Amz-Target, the answer as the service gives it.
  secretsServer = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { SecretId } = JSON.parse(body) as { SecretId: string };
      secretRequests.push(`${String(request.headers['x-amz-target'])} ${SecretId}`);
      const value = SECRETS[SecretId];
      response.writeHead(value ? 200 : 400, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(
        JSON.stringify(
          value
            ? { ARN: SecretId, Name: SecretId.split(':').at(-1), SecretString: value, VersionId: 'v1' }
            : { __type: 'ResourceNotFoundException', message: 'Secrets Manager can not find the specified secret.' },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => secretsServer.listen(0, '127.0.0.1', resolve));
  await ensureTable(dynamo.client, tableName, endpoint());
  await putItems(dynamo.doc, tableName, demoItems());
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => secretsServer.close(resolve));
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
  streams.destroy();
});

/** Runs the bundle's handler on each event in turn, in one fresh process (one cold start). */
function invokeBundle(name: 'graphql' | 'streams', env: Record<string, string>, events: unknown[]): Promise<any[]> {
  const entry = path.join(cachedBundle(name).dir, 'index.mjs');
  const script = [
    "import { pathToFileURL } from 'node:url';",
    'const { handler } = await import(pathToFileURL(process.argv[1]).href);',
    'const results = [];',
    'for (const event of JSON.parse(process.argv[2])) results.push(await handler(event, {}));',
    'process.stdout.write(JSON.stringify(results));',
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, entry, JSON.stringify(events)], {
    cwd: path.dirname(entry),
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      DYNAMODB_ENDPOINT: endpoint(),
      TABLE_NAME: tableName,
      LOG_LEVEL: 'silent',
      NODE_NO_WARNINGS: '1',
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(stdout) as any[]) : reject(new Error(`bundle exited ${code}: ${stderr}`)),
    );
  });
}

const graphQLEnv = () => ({
  NODE_ENV: 'production',
  CURSOR_SECRET_ARN: CURSOR_ARN,
  JWT_SECRET_ARN: JWT_ARN,
  AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(secretsServer.address() as AddressInfo).port}`,
});

const httpEvent = (body: unknown, token: string) => ({
  version: '2.0',
  routeKey: 'POST /graphql',
  rawPath: '/graphql',
  rawQueryString: '',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  requestContext: {
    accountId: '123456789012',
    apiId: 'api',
    domainName: 'example.execute-api.us-east-1.amazonaws.com',
    domainPrefix: 'example',
    http: { method: 'POST', path: '/graphql', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
    requestId: randomUUID(),
    routeKey: 'POST /graphql',
    stage: '$default',
    time: '02/Dec/2026:12:00:00 +0000',
    timeEpoch: 1796212800000,
  },
  body: JSON.stringify(body),
  isBase64Encoded: false,
});

/** Every record of the table's stream so far, as the Lambda event source mapping delivers them. */
async function streamEvent(keep: (record: _Record) => boolean) {
  const streamArn = await findStreamArn(dynamo.client, tableName);
  const records: _Record[] = [];
  for (const shard of await listShards(streams, streamArn)) {
    let { ShardIterator: iterator } = await streams.send(
      new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.shardId, ShardIteratorType: 'TRIM_HORIZON' }),
    );
    for (let page = 0; iterator && page < 100; page++) {
      const result = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      if (!result.Records?.length) break;
      records.push(...result.Records.filter(keep));
      iterator = result.NextShardIterator;
    }
  }
  return {
    Records: records.map((record) => ({
      ...record,
      eventSourceARN: streamArn,
      dynamodb: {
        ...record.dynamodb,
        ApproximateCreationDateTime: (record.dynamodb?.ApproximateCreationDateTime?.getTime() ?? 0) / 1000,
      },
    })),
  };
}

const SOLD = '{ product(productId: "headphones-x1") { soldCount } }';
const PLACE = `mutation Place($input: PlaceOrderInput!) {
  placeOrder(input: $input) { order { orderId } userErrors { code } }
}`;

describe('the bundled functions', () => {
  it('serve GraphQL with the secrets read once at cold start, and process the order on the stream', async () => {
    const token = await signToken({ userId: 'alice', role: 'customer' }, { ...TEST_AUTH, secret: SECRETS[JWT_ARN] });
    const input = { userId: 'alice', items: [{ productId: 'headphones-x1', quantity: 2 }], idempotencyKey: 'bundle-1' };
    const [before, placed] = await invokeBundle('graphql', graphQLEnv(), [
      httpEvent({ query: SOLD }, token),
      httpEvent({ query: PLACE, variables: { input } }, token),
    ]);
    expect(before.statusCode).toBe(200);
    const soldBefore = JSON.parse(before.body).data.product.soldCount as number;
    const payload = JSON.parse(placed.body).data.placeOrder;
    expect(payload.userErrors).toEqual([]);
    // One GetSecretValue per secret for the whole process, however many requests it serves.
    expect(secretRequests.sort()).toEqual([
      `secretsmanager.GetSecretValue ${CURSOR_ARN}`,
      `secretsmanager.GetSecretValue ${JWT_ARN}`,
    ]);

    const orderPk = `ORDER#${payload.order.orderId as string}`;
    const event = await streamEvent((record) => record.dynamodb?.Keys?.PK?.S === orderPk);
    expect(event.Records.length).toBeGreaterThan(0);
    // Delivered twice, as a retry would: the second delivery changes nothing.
    expect(await invokeBundle('streams', {}, [event, event])).toEqual([
      { batchItemFailures: [] },
      { batchItemFailures: [] },
    ]);
    const [after] = await invokeBundle('graphql', graphQLEnv(), [httpEvent({ query: SOLD }, token)]);
    expect(JSON.parse(after.body).data.product.soldCount).toBe(soldBefore + 2);
  }, 120_000);

  it('fails the cold start, naming the variable, when a secret cannot be read', async () => {
    const missing = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:Gone-000000';
    await expect(
      invokeBundle('graphql', { ...graphQLEnv(), CURSOR_SECRET_ARN: missing }, [httpEvent({ query: SOLD }, 'x')]),
    ).rejects.toThrow(`CURSOR_SECRET_ARN: cannot read ${missing}`);
  }, 60_000);
});
