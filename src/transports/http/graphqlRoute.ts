/**
 * /graphql on node:http: translation only. The request becomes a `GraphQLHttpRequest` (its
 * headers, its query string, the request stream as the body) for the pipeline's
 * `handleGraphQLHttp`, and the answer goes back compressed (send.ts), a cache hit's with the
 * compressed bytes its entry keeps. Every policy (body limit, CSRF, persisted-only, caching
 * headers) is the pipeline's.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { handleGraphQLHttp } from '../../pipeline/http/graphqlHttp.js';
import type { GraphQLHttpRuntime, RequestHeaders } from '../../pipeline/http/graphqlHttp.js';
import { httpTraceOf } from '../../telemetry/http.js';
import { sendBody } from './send.js';

/** node:http's headers as the pipeline reads them (lower-case names, repeated values joined), without a copy. */
export class NodeRequestHeaders implements RequestHeaders {
  constructor(private readonly headers: IncomingHttpHeaders) {}

  get(name: string): string | undefined {
    const value: unknown = this.headers[name];
    // Own values only: a name such as `constructor` is no header.
    if (typeof value === 'string') return value;
    return Array.isArray(value) ? value.join(', ') : undefined;
  }

  *[Symbol.iterator](): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.headers)) {
      const value = this.get(name);
      if (value !== undefined) yield [name, value];
    }
  }
}

export function graphqlRoute(runtime: GraphQLHttpRuntime) {
  /** `search` is the request's query string, with its `?`. */
  return async (req: IncomingMessage, res: ServerResponse, search: string): Promise<void> => {
    const response = await handleGraphQLHttp(
      {
        method: req.method ?? 'GET',
        search,
        headers: new NodeRequestHeaders(req.headers),
        body: req,
        trace: httpTraceOf(req),
      },
      runtime,
    );
    // A body refused for its size is left unread: close the connection rather than drain it.
    if (response.status === 413) res.setHeader('connection', 'close');
    await sendBody(req, res, response.status, response.headers, response.body, response.encoded);
  };
}
