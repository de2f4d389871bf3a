/**
 * The connected-test harness: a fresh table in the run's DynamoDB Local, the real HTTP server
 * on a free port in front of it, and the one GraphQL client of the tests: `gql()` over fetch,
 * typed when given a codegen document (client/generated).
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { pino } from 'pino';
import { inject } from 'vitest';
import { createDynamo } from '../../src/db/client.js';
import type { Dynamo } from '../../src/db/client.js';
import { CursorCodec } from '../../src/db/cursor.js';
import { ensureTable } from '../../src/db/ensureTable.js';
import type { SchemaGate } from '../../src/db/schemaGate.js';
import { signToken } from '../../src/auth/tokens.js';
import type { AuthConfig, Role } from '../../src/auth/tokens.js';
import { DEFAULT_LIMITS } from '../../src/config/index.js';
import { startApp } from './app.js';
import type { AppOptions, RunningApp } from './app.js';
import { differentialServer } from './differentialExecutor.js';
import { createStreamsClient } from '../../src/streams/streamsClient.js';
import type { TypedDocumentString } from '../../client/generated/graphql.js';

/**
 * How long before a SIGKILL a write DynamoDB Local acknowledged may still be lost. The emulator is
 * not durable at once: a bare TransactWriteItems loop lost the last transaction it had
 * acknowledged, 1-9 ms before the kill, in 4 of 12 runs (Amazon DynamoDB's acknowledgement is
 * durable). Generous, since a client sees the answer a little after the emulator sent it; the
 * emulator gives no signal to wait for instead.
 */
export const EMULATOR_UNSYNCED_MS = 250;

export const TEST_CURSOR_SECRET = 'test-cursor-secret';
export const TEST_AUTH: AuthConfig = { secret: 'test-jwt-secret', issuer: 'tablegraph-local', audience: 'tablegraph' };

/** A bearer token of the test servers' issuer. */
export const tokenFor = (userId: string, role: Role = 'customer') => signToken({ userId, role }, TEST_AUTH);

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  extensions?: { cost?: { dynamodb: { requests: number; readCapacityUnits: number; writeCapacityUnits: number } } };
}

export interface TestServer {
  url: string;
  tableName: string;
  /** A client of the test table without the server's middleware, for arranging and inspecting data. */
  dynamo: Dynamo;
  app: RunningApp;
  /** A typed document of client/generated: the variables and the answer's data are typed by codegen. */
  gql<TResult, TVariables>(
    document: TypedDocumentString<TResult, TVariables>,
    variables: TVariables,
    headers?: Record<string, string>,
  ): Promise<GraphQLResponse<TResult>>;
  gql<T = Record<string, any>>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GraphQLResponse<T>>;
  stop(): Promise<void>;
}

export interface TestServerOptions extends Partial<
  Pick<
    AppOptions,
    | 'limits'
    | 'websocket'
    | 'introspection'
    | 'playground'
    | 'persistedOnly'
    | 'documentsRefreshMs'
    | 'sseReplayEvents'
    | 'http'
    | 'metrics'
    | 'costDetails'
    | 'cors'
    | 'shutdownGraceMs'
    | 'trustProxyHops'
    | 'cacheMaxAgeSeconds'
    | 'responseCache'
    | 'explainCache'
    | 'sharedCache'
    | 'devSignIn'
    | 'executor'
    | 'execute'
    | 'log'
  >
> {
  /** Adds middleware to the server's own DynamoDB client (e.g. to withhold keys from BatchGetItem). */
  configureClient?: (client: DynamoDBClient) => void;
  /** Serve this existing table (a second instance); it is then left in place by stop(). */
  tableName?: string;
  /** Run the stream consumer (subscriptions, soldCount), polling every 50 ms. */
  streams?: boolean;
  /** What the table can serve (a server in front of a table with migrations pending). */
  schema?: SchemaGate;
  /** Read a user with their first orders page in one Query (default true, as the server). */
  itemCollections?: boolean;
}

export const endpoint = (): string => inject('dynamoEndpoint');

/** Creates a table named after the test file plus a random suffix; the caller seeds it. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const ownTable = options.tableName === undefined;
  const tableName = options.tableName ?? `t-${randomUUID()}`;
  const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  await ensureTable(dynamo.client, tableName, endpoint());
  const streamsClient = options.streams
    ? createStreamsClient({ endpoint: endpoint(), region: 'us-east-1' })
    : undefined;
  const serverDynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  options.configureClient?.(serverDynamo.client);
  const {
    configureClient: _configure,
    tableName: _table,
    streams: _streams,
    schema,
    itemCollections = true,
    ...appOptions
  } = options;
  const data = {
    dynamo: serverDynamo,
    tableName,
    cursors: new CursorCodec(TEST_CURSOR_SECRET),
    schema,
    itemCollections,
  };
  // The differential suite: the planned executor answers and graphql-js checks every operation.
  const differential =
    inject('differential') && !options.execute && !options.executor
      ? differentialServer(data, options.limits ?? DEFAULT_LIMITS)
      : undefined;
  const app = await startApp({
    host: '127.0.0.1',
    port: 0,
    data: differential?.data ?? data,
    ...(differential ? { execute: differential.execute } : {}),
    log: pino({ level: 'silent' }),
    auth: TEST_AUTH,
    // The registry is read once at start-up; a background re-read would be one more GetItem in
    // the middle of the tests that count a request's DynamoDB calls. Tests of the registry's
    // polling pass their own interval.
    documentsRefreshMs: 3_600_000,
    ...appOptions,
    ...(streamsClient
      ? { streams: { client: streamsClient, consumerName: `test-${randomUUID().slice(0, 8)}`, pollIntervalMs: 50 } }
      : {}),
  });
  const adminToken = await tokenFor('test-admin', 'admin');
  return {
    url: app.url,
    tableName,
    dynamo,
    async gql(
      query: string | TypedDocumentString<unknown, unknown>,
      variables?: unknown,
      headers: Record<string, string> = {},
    ) {
      // An admin by default (sees and may do everything); pass `authorization` to act as someone
      // else, or `authorization: ''` to send no token at all.
      const { authorization = `Bearer ${adminToken}`, ...rest } = headers;
      const response = await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...rest, ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ query: query.toString(), variables }),
      });
      const body = (await response.json()) as Omit<GraphQLResponse, 'status'>;
      return { status: response.status, ...body } as GraphQLResponse<any>;
    },
    async stop() {
      await app.stop();
      streamsClient?.destroy();
      serverDynamo.client.destroy();
      if (ownTable) await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
      dynamo.client.destroy();
    },
    app,
  };
}

/** The codes of a response's errors, in order. */
export const errorCodes = (response: GraphQLResponse): unknown[] =>
  (response.errors ?? []).map((error) => error.extensions?.code);
