/**
 * API Gateway (HTTP API, payload v2) events as GraphQL requests over HTTP, and the pipeline's
 * answers as API Gateway results: translation only. The policy of a request (body limit, CSRF,
 * persisted-only, caching headers) is the pipeline's `handleGraphQLHttp`, as on the node:http
 * server.
 */
import { HeaderMap } from '@apollo/server';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { GraphQLHttpRequest, GraphQLHttpResponse } from '../../pipeline/http/graphqlHttp.js';

/** The event as the pipeline reads a request; API Gateway's request id stands in for a missing x-request-id. */
export function graphqlRequestOf(event: APIGatewayProxyEventV2): GraphQLHttpRequest {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers.set(name.toLowerCase(), value);
  }
  // Payload v2 moves the Cookie header into `cookies`; CSRF prevention looks for it.
  if (event.cookies?.length) headers.set('cookie', event.cookies.join('; '));
  const body = event.body;
  return {
    method: event.requestContext.http.method,
    search: event.rawQueryString ? `?${event.rawQueryString}` : '',
    headers,
    body: body === undefined ? undefined : event.isBase64Encoded ? Buffer.from(body, 'base64') : body,
    requestId: event.requestContext.requestId,
  };
}

/** The pipeline's answer as an API Gateway result. */
export function resultOf(response: GraphQLHttpResponse): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: response.status,
    headers: { ...Object.fromEntries(response.headers), 'content-length': String(Buffer.byteLength(response.body)) },
    body: response.body,
  };
}
