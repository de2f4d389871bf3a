/**
 * /graphql on node:http: translation only. The request becomes a `GraphQLHttpRequest` (its
 * headers, its query string, the request stream as the body) for the pipeline's
 * `handleGraphQLHttp`, and the answer goes back compressed (send.ts), a cache hit's with the
 * compressed bytes its entry keeps. Every policy (body limit, CSRF, persisted-only, caching
 * headers) is the pipeline's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap } from '@apollo/server';
import { handleGraphQLHttp } from '../../pipeline/http/graphqlHttp.js';
import type { GraphQLHttpRuntime } from '../../pipeline/http/graphqlHttp.js';
import { httpTraceOf } from '../../telemetry/http.js';
import { sendBody } from './send.js';

/** node:http's headers as Apollo's map: lower-case names, repeated values joined. */
export function headerMapOf(req: IncomingMessage): HeaderMap {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

export function graphqlRoute(runtime: GraphQLHttpRuntime) {
  /** `search` is the request's query string, with its `?`. */
  return async (req: IncomingMessage, res: ServerResponse, search: string): Promise<void> => {
    const response = await handleGraphQLHttp(
      { method: req.method ?? 'GET', search, headers: headerMapOf(req), body: req, trace: httpTraceOf(req) },
      runtime,
    );
    // A body refused for its size is left unread: close the connection rather than drain it.
    if (response.status === 413) res.setHeader('connection', 'close');
    await sendBody(req, res, response.status, response.headers, response.body, response.encoded);
  };
}
