/**
 * /graphql on node:http: translation only. The request becomes a `GraphQLHttpRequest` (its
 * headers, its query string, the request stream as the body) for the pipeline's
 * `handleGraphQLHttp`, and the answer goes back compressed (send.ts). Every policy (body limit,
 * CSRF, persisted-only, caching headers) is the pipeline's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap } from '@apollo/server';
import { handleGraphQLHttp } from '../../pipeline/graphqlHttp.js';
import type { GraphQLHttpRuntime } from '../../pipeline/graphqlHttp.js';
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
    const status = response.status ?? 200;
    // A body refused for its size is left unread: close the connection rather than drain it.
    if (status === 413) res.setHeader('connection', 'close');
    if (response.body.kind === 'complete') {
      await sendBody(req, res, status, response.headers, response.body.string);
      return;
    }
    // Incremental delivery (multipart): each part as it comes, uncompressed.
    for (const [name, value] of response.headers) res.setHeader(name, value);
    res.statusCode = status;
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  };
}
