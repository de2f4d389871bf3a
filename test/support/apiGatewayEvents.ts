/**
 * API Gateway (HTTP API, payload v2) events of GraphQL requests, and a request's fields as GET
 * parameters: what the transports harness sends the Lambda handler, in a module without vitest,
 * so the benches build their events the same way.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export interface WireRequest {
  query?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  extensions?: Record<string, unknown>;
}

/** A request's fields as GET parameters (GraphQL over HTTP: `variables` and `extensions` as JSON). */
export const searchOf = (request: WireRequest): string => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(request)) {
    if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return search.toString();
};

export const apiGatewayEvent = (
  body: string,
  headers: Record<string, string> = {},
  requestId = 'lambda-request',
  sourceIp = '127.0.0.1',
): APIGatewayProxyEventV2 => ({
  version: '2.0',
  routeKey: 'POST /graphql',
  rawPath: '/graphql',
  rawQueryString: '',
  headers: { 'content-type': 'application/json', ...headers },
  requestContext: {
    accountId: '123456789012',
    apiId: 'api',
    domainName: 'example.execute-api.us-east-1.amazonaws.com',
    domainPrefix: 'example',
    http: { method: 'POST', path: '/graphql', protocol: 'HTTP/1.1', sourceIp, userAgent: 'test' },
    requestId,
    routeKey: 'POST /graphql',
    stage: '$default',
    time: '02/Dec/2026:12:00:00 +0000',
    timeEpoch: 1796212800000,
  },
  body,
  isBase64Encoded: false,
});

/** A GET of /graphql through API Gateway: the request's fields in the query string, no body. */
export const apiGatewayGetEvent = (
  request: WireRequest,
  headers: Record<string, string> = {},
  sourceIp = '127.0.0.1',
): APIGatewayProxyEventV2 => {
  const event = apiGatewayEvent('', headers, 'lambda-request', sourceIp);
  const { 'content-type': _contentType, ...withoutBody } = event.headers;
  return {
    ...event,
    routeKey: 'GET /graphql',
    rawQueryString: searchOf(request),
    headers: withoutBody,
    body: undefined,
    requestContext: {
      ...event.requestContext,
      routeKey: 'GET /graphql',
      http: { ...event.requestContext.http, method: 'GET' },
    },
  };
};
