/**
 * GraphQL over HTTP, once for every HTTP transport: the node:http server
 * (src/transports/http/server.ts) and the Lambda (src/transports/lambda/apiGateway.ts) only
 * translate their request into a `GraphQLHttpRequest` and the answer back.
 *
 * In order: the body under the body limit (httpBody.ts: 413, 415, 400), a `documentId` or Relay
 * `doc_id` read as the persisted-query extension Apollo resolves (operationRequest.ts), CSRF
 * prevention (csrf.ts), PERSISTED_ONLY (the admission's source stage), the document stage of
 * admission for a document sent as text (parse, selection pre-check, validation), then Apollo Server's
 * `executeHTTPGraphQLRequest` with the pipeline's context, and the ETag of a public answer
 * (a 304 to a matching If-None-Match). A refusal before Apollo answers in GraphQL's shape
 * (`{ errors }`, `private, no-store`) and is logged and counted by the reporter like any other.
 */
import { randomUUID } from 'node:crypto';
import { HeaderMap } from '@apollo/server';
import type { ApolloServer, HTTPGraphQLRequest, HTTPGraphQLResponse } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { ErrorCode } from '../errors.js';
import type { TraceParent } from '../telemetry/requestTrace.js';
import type { Transport } from './admission.js';
import { etagOf, NO_STORE } from './httpCaching.js';
import { BodyRefused, parseJsonBody, readBody } from './httpBody.js';
import { acceptsOnlyJson } from './jsonErrorStatus.js';
import type { BodySource } from './httpBody.js';
import { operationRequestOf, withPersistedQuery } from './operationRequest.js';
import type { Pipeline } from './pipeline.js';

/** What handleGraphQLHttp needs of the process (the runtime, src/runtime.ts, is one). */
export interface GraphQLHttpRuntime {
  pipeline: Pipeline;
  apollo: ApolloServer<GraphQLContext>;
  /** The transport label of logs and metrics. */
  transport: Extract<Transport, 'http' | 'lambda'>;
}

export interface GraphQLHttpRequest {
  method: string;
  /** The query string, with or without its leading `?`. */
  search: string;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: HeaderMap;
  /** The body as it arrives; read here, under the body limit. Ignored unless the method is POST. */
  body?: BodySource | undefined;
  /** The platform's id of the request (Lambda's), used when the client sent no sane `x-request-id`. */
  requestId?: string | undefined;
  /** The HTTP server span the operation's trace hangs under. */
  trace?: TraceParent | undefined;
}

export type GraphQLHttpResponse = HTTPGraphQLResponse;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One id per request: the caller's (or a proxy's) `x-request-id` when it is a sane one. */
export const requestIdOf = (header: string | undefined, fallback?: string): string =>
  header !== undefined && /^[A-Za-z0-9._-]{1,64}$/.test(header) ? header : (fallback ?? randomUUID());

/** The media type's essence and charset of a Content-Type header. */
export function mediaTypeOf(contentType: string | undefined): { essence: string; charset: string | undefined } {
  const [essence = '', ...parameters] = (contentType ?? '').split(';');
  const charset = parameters
    .map((parameter) => /^\s*charset\s*=\s*"?([^";\s]*)"?\s*$/i.exec(parameter)?.[1])
    .find((value) => value !== undefined);
  return { essence: essence.trim().toLowerCase(), charset };
}

/** RFC 9110's If-None-Match with the weak comparison, as `fresh` (Express) reads it. */
export function isFresh(headers: HeaderMap, etag: string): boolean {
  const noneMatch = headers.get('if-none-match');
  if (!noneMatch) return false;
  // A client that asks for an end-to-end reload gets the full answer.
  if (/(?:^|,)\s*no-cache\s*(?:,|$)/.test(headers.get('cache-control') ?? '')) return false;
  if (noneMatch.trim() === '*') return true;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return noneMatch.split(',').some((tag) => strip(tag) === strip(etag));
}

const searchOf = (params: Record<string, unknown>): string => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return `?${search.toString()}`;
};

const CODE_OF_STATUS: Record<BodyRefused['status'], string> = {
  400: 'BAD_REQUEST',
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: 'BAD_REQUEST',
};

/**
 * Answers one GraphQL request over HTTP. Never throws for anything a client sent; an
 * unexpected failure (a bug) rejects, and the adapter answers 500.
 */
export async function handleGraphQLHttp(
  request: GraphQLHttpRequest,
  { pipeline, apollo, transport }: GraphQLHttpRuntime,
): Promise<GraphQLHttpResponse> {
  const { headers } = request;
  const method = request.method.toUpperCase();
  const requestId = requestIdOf(headers.get('x-request-id'), request.requestId);

  const refuse = (status: number, errors: readonly GraphQLError[]): GraphQLHttpResponse => ({
    status,
    headers: new HeaderMap([
      ['content-type', 'application/json; charset=utf-8'],
      ['cache-control', NO_STORE],
      ['x-request-id', requestId],
    ]),
    body: {
      kind: 'complete',
      string: JSON.stringify({
        errors: pipeline.reporter.finishErrors(errors, { transport, operationName: null }),
      }),
    },
  });

  let body: unknown;
  if (method === 'POST') {
    try {
      const text = await readBody(request.body ?? '', {
        limit: pipeline.limits.maxBodyBytes,
        contentLength: headers.get('content-length'),
        contentEncoding: headers.get('content-encoding'),
      });
      const { essence, charset } = mediaTypeOf(headers.get('content-type'));
      // Another media type leaves the body unread, as Apollo expects (it answers 400).
      if (essence === 'application/json') body = parseJsonBody(text, charset);
    } catch (error) {
      if (!(error instanceof BodyRefused)) throw error;
      return refuse(error.status, [
        new GraphQLError(error.message, { extensions: { code: CODE_OF_STATUS[error.status] } }),
      ]);
    }
  }

  const params =
    method === 'GET' ? Object.fromEntries(new URLSearchParams(request.search)) : isRecord(body) ? body : {};
  const rewritten = withPersistedQuery(params, (id) => pipeline.documents.sha256Of(id));
  const operation = operationRequestOf(rewritten);
  // A document sent by id may be trusted without its text at hand (the Lambda reads the
  // registry's index): read it now, before anything looks it up.
  if (!operation.query && typeof operation.persistedHash === 'string') {
    try {
      await pipeline.documents.ensure(operation.persistedHash);
    } catch (error) {
      pipeline.log.error({ err: error }, 'trusted document could not be read from the registry');
      return refuse(503, [
        new GraphQLError('The trusted documents cannot be read right now; try again shortly', {
          extensions: { code: ErrorCode.SERVICE_UNAVAILABLE },
        }),
      ]);
    }
  }
  const refusal =
    pipeline.csrf(method, (name) => headers.get(name), operation) ??
    (method === 'GET' || method === 'POST' ? pipeline.admission.persistedOnlyCheck(operation) : null);
  if (refusal) return refuse(refusal.status, refusal.errors);
  // The document goes through admission's document stage before Apollo sees it: Apollo would
  // parse and validate a refused document once more to word its refusal, and a refusal
  // remembered by its hash would cost a full validation again.
  if (typeof operation.query === 'string' && operation.query !== '') {
    const admitted = await pipeline.admission.document(operation.query);
    if (!admitted.ok) {
      const jsonClient = acceptsOnlyJson(headers.get('accept'));
      return refuse(jsonClient ? 200 : admitted.status, admitted.errors);
    }
  }

  const httpGraphQLRequest: HTTPGraphQLRequest = {
    method,
    headers,
    search: method === 'GET' && rewritten !== params ? searchOf(rewritten) : request.search,
    body: rewritten !== params ? rewritten : body,
  };
  const response = await apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest,
    context: async () =>
      pipeline.execution.context(
        await pipeline.execution.viewer(headers.get('authorization')),
        requestId,
        request.trace,
      ),
  });
  response.headers.set('x-request-id', requestId);
  // Apollo's own refusals (405, a malformed request) pass no plugin: nothing may store them either.
  if (!response.headers.has('cache-control')) response.headers.set('cache-control', NO_STORE);
  return withEtag(method, headers, response);
}

/**
 * An answer the pipeline made public (httpCaching.ts) gets an ETag (the response cache's,
 * when it set one: the same for a miss and its hits), and a request that already holds it a
 * bodiless 304.
 */
function withEtag(method: string, headers: HeaderMap, response: GraphQLHttpResponse): GraphQLHttpResponse {
  if (response.body.kind !== 'complete' || !response.headers.get('cache-control')?.startsWith('public')) {
    return response;
  }
  const etag = response.headers.get('etag') ?? etagOf(response.body.string);
  response.headers.set('etag', etag);
  if (method !== 'GET' || (response.status ?? 200) !== 200 || !isFresh(headers, etag)) return response;
  response.headers.delete('content-type');
  response.headers.delete('content-length');
  return { status: 304, headers: response.headers, body: { kind: 'complete', string: '' } };
}
