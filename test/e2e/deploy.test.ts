/** The deployment artefacts: the Lambda entry serves GraphQL, and npm run capacity sizes a provisioned table. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import { loadGraphQLLambdaConfig } from '../../src/config/index.js';
import { putItems } from '../../src/db/batchWrite.js';
import { createGraphQLHandler } from '../../src/lambda/graphql.js';
import { migrate } from '../../src/migrations/runner.js';
import { demoItems } from '../../src/seed/seed.js';
import { endpoint, startTestServer, TEST_AUTH } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { PROJECT_ROOT } from '../support/serverProcess.js';
import { apiGatewayEvent } from '../support/transports.js';

const LAMBDA_JWT_SECRET = 'a-production-grade-secret-of-40-characters';

describe('the GraphQL Lambda handler', () => {
  let server: TestServer;
  let handler: ReturnType<typeof createGraphQLHandler>;
  beforeAll(async () => {
    // A table of its own in the test DynamoDB Local; the handler is built as on AWS, from its loader's configuration.
    server = await startTestServer();
    await putItems(server.dynamo.doc, server.tableName, demoItems());
    handler = createGraphQLHandler(lambdaConfig());
  });
  afterAll(() => server.stop());

  const lambdaConfig = () =>
    loadGraphQLLambdaConfig({
      NODE_ENV: 'production',
      DYNAMODB_ENDPOINT: endpoint(),
      TABLE_NAME: server.tableName,
      CURSOR_SECRET: 'lambda-test-cursor-secret',
      JWT_SECRET: LAMBDA_JWT_SECRET,
      LOG_LEVEL: 'silent',
    });

  const event = (body: unknown, headers: Record<string, string> = {}) =>
    apiGatewayEvent(JSON.stringify(body), headers, 'lambda-request-1');

  it('answers a query with data and its DynamoDB cost', async () => {
    const result = await handler(
      event(
        { query: '{ user(userId: "alice") { name orders(first: 2) { totalCount } } }' },
        {
          authorization: `Bearer ${await signToken({ userId: 'alice', role: 'customer' }, { ...TEST_AUTH, secret: LAMBDA_JWT_SECRET })}`,
        },
      ),
      {} as Context,
    );
    expect(result.statusCode).toBe(200);
    const body = JSON.parse(result.body ?? '{}') as {
      data: unknown;
      extensions: { cost: { dynamodb: { requests: number } } };
    };
    expect(body.data).toEqual({ user: { name: 'Alice Example', orders: { totalCount: 30 } } });
    // The user and the first page of their orders: one Query over the user's item collection.
    expect(body.extensions.cost.dynamodb.requests).toBe(1);
  });

  it('refuses Query.orders with MIGRATION_PENDING on a table not migrated, and serves it from a cold start after npm run migrate', async () => {
    const admin = {
      authorization: `Bearer ${await signToken({ userId: 'ops', role: 'admin' }, { ...TEST_AUTH, secret: LAMBDA_JWT_SECRET })}`,
    };
    const ask = async (fn: typeof handler) => {
      const result = await fn(event({ query: '{ orders(first: 1) { nodes { orderId } } }' }, admin), {} as Context);
      return JSON.parse(result.body ?? '{}') as {
        data?: any;
        errors?: { message: string; extensions: { code: string } }[];
      };
    };
    const before = await ask(handler);
    expect(before.errors?.map((error) => error.extensions.code)).toEqual(['MIGRATION_PENDING']);
    expect(before.errors?.[0]?.message).toMatch(/npm run migrate/);
    await migrate({ client: server.dynamo.client, doc: server.dynamo.doc, tableName: server.tableName });
    const after = await ask(createGraphQLHandler(lambdaConfig()));
    expect(after.errors).toBeUndefined();
    expect(after.data.orders.nodes).toHaveLength(1);
  });

  it('refuses a forged token with 401', async () => {
    const result = await handler(
      event({ query: '{ viewer { userId } }' }, { authorization: 'Bearer a.b.c' }),
      {} as Context,
    );
    expect(result.statusCode).toBe(401);
  });

  it('keeps introspection off in production', async () => {
    const result = await handler(event({ query: '{ __schema { types { name } } }' }), {} as Context);
    expect(result.statusCode).toBe(400);
  });
});

describe('npm run capacity', () => {
  let results: string;
  beforeAll(() => {
    results = path.join(mkdtempSync(path.join(tmpdir(), 'capacity-')), 'results.json');
    writeFileSync(
      results,
      JSON.stringify({
        costs: [
          { op: 'userOrders', variant: 'server', amazon: { readUnits: 10, writeUnits: 0, requests: 3 } },
          {
            op: 'placeOrder',
            variant: 'server',
            amazon: { readUnits: 4, writeUnits: 12, indexWriteUnits: 2, requests: 2 },
          },
          { op: 'userOrders', variant: 'naive', amazon: { readUnits: 99, writeUnits: 0, requests: 40 } },
        ],
      }),
    );
  });
  const capacity = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/capacity.ts', ...args, '--results', results], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });

  it('turns a traffic mix into provisioned capacity from the benchmark costs', () => {
    const result = capacity('userOrders=50', 'placeOrder=5', '--target', '50');
    expect(result.status).toBe(0);
    // 50 x 10 + 5 x 4 = 520 RCU; 5 x (12 + 2) = 70 WCU; at 50% utilisation twice that.
    expect(result.stdout).toContain('Needed: 520.0 RCU and 70.0 WCU');
    expect(result.stdout).toContain('ReadCapacity 1040, WriteCapacity 140');
  }, 30_000);

  it('refuses an operation it has no cost for', () => {
    const result = capacity('teleport=5');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('operations: userOrders, placeOrder');
  }, 30_000);
});
