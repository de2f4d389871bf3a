/**
 * One policy, every transport: the same GraphQL request sent over HTTP (the test server) or
 * through the Lambda handler (built from the Lambda's configuration, on the same table), answered in one shape.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { loadGraphQLLambdaConfig } from '../../src/config/index.js';
import { createGraphQLHandler } from '../../src/lambda/graphql.js';
import { endpoint, TEST_AUTH, TEST_CURSOR_SECRET } from './harness.js';
import type { GraphQLResponse, TestServer } from './harness.js';
import { apiGatewayEvent } from './transports.js';

export type Send = (
  query: string,
  variables?: Record<string, unknown>,
  authorization?: string,
) => Promise<GraphQLResponse<any>>;

export interface Transport {
  name: string;
  send: Send;
}

// A client of another host: loopback-only rules must not apply to it.
const lambdaEvent = (body: unknown, authorization: string | undefined): APIGatewayProxyEventV2 =>
  apiGatewayEvent(JSON.stringify(body), authorization ? { authorization } : {}, 'lambda-request', '203.0.113.9');

/**
 * One operation over graphql-ws on `url` (queries run there too): its first result, or the
 * errors the server refused it with. `status` is 0: WebSocket messages have none.
 */
export async function sendOverWebSocket(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  authorization = '',
): Promise<GraphQLResponse<any>> {
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: authorization ? { authorization } : {},
    retryAttempts: 0,
  });
  try {
    const iterator = client.iterate({ query, variables });
    const { value } = await iterator.next();
    await iterator.return?.();
    return { status: 0, ...(value as object) } as GraphQLResponse<any>;
  } catch (errors) {
    return { status: 0, errors: errors as GraphQLResponse['errors'] };
  } finally {
    await client.dispose();
  }
}

/** HTTP through `server`, and a Lambda handler on the same table with `env` added to its configuration. */
export function transportsOf(server: TestServer, env: Record<string, string> = {}): Transport[] {
  const handler = createGraphQLHandler(
    loadGraphQLLambdaConfig({
      NODE_ENV: 'test',
      DYNAMODB_ENDPOINT: endpoint(),
      TABLE_NAME: server.tableName,
      CURSOR_SECRET: TEST_CURSOR_SECRET,
      JWT_SECRET: TEST_AUTH.secret,
      LOG_LEVEL: 'silent',
      STREAM_CONSUMER: 'false',
      ...env,
    }),
  );
  return [
    {
      name: 'WebSocket',
      send: (query, variables, authorization) => sendOverWebSocket(server.url, query, variables, authorization),
    },
    {
      name: 'HTTP',
      send: (query, variables, authorization = '') => server.gql(query, variables, { authorization }),
    },
    {
      name: 'Lambda',
      send: async (query, variables, authorization) => {
        const result = await handler(lambdaEvent({ query, variables }, authorization || undefined), {} as Context);
        return {
          status: result.statusCode ?? 0,
          ...(JSON.parse(result.body ?? '{}') as object),
        } as GraphQLResponse<any>;
      },
    },
  ];
}
