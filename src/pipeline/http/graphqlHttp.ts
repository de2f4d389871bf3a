/**
 * GraphQL over HTTP, once for every HTTP transport: the node:http server
 * (src/transports/http/server.ts) and the Lambda (src/transports/lambda/apiGateway.ts) only
 * translate their request into a `GraphQLHttpRequest` and the answer back; SSE reads its
 * request with the same `readGraphQLHttpRequest`.
 *
 * In order: the body under the body limit (httpBody.ts: 413, 415, 400); the request fields
 * (operationRequest.ts), where a request that is not one operation goes to Apollo Server at the
 * edge (apollo.ts), which answers it in its own words; the client's media types (406 when it
 * accepts neither JSON type); then the request core (serve.ts) and its settled answer, written
 * with the negotiated Content-Type, `x-request-id`, the status GraphQL over HTTP asks for an
 * `application/json` client (200 for a document that fails to parse or validate), and the ETag
 * of a public answer (a 304 to a matching If-None-Match).
 */
import { randomUUID } from 'node:crypto';
import { HeaderMap } from '@apollo/server';
import type { HTTPGraphQLRequest } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { GraphQLFormattedError } from 'graphql';
import Negotiator from 'negotiator';
import { newRequestCost } from '../../db/capacity.js';
import { ErrorCode } from '../../errors.js';
import type { TraceParent } from '../../telemetry/requestTrace.js';
import type { OperationRequest, Transport } from '../admission/admission.js';
import type { ApolloEdge } from './apollo.js';
import { BodyRefused, parseJsonBody, readBody } from './httpBody.js';
import type { BodySource } from './httpBody.js';
import { NO_STORE } from '../report/httpCaching.js';
import { envelopeProblem, operationRequestOf } from './operationRequest.js';
import type { Pipeline } from '../pipeline.js';
import type { EncodedBodies } from '../report/answer.js';

/** What handleGraphQLHttp needs of the process (the runtime, src/runtime.ts, is one). */
export interface GraphQLHttpRuntime {
  pipeline: Pipeline;
  /** Apollo Server at the edge: the answer to a request that is not one operation. */
  apollo: ApolloEdge;
  /** The transport label of logs and metrics. */
  transport: Extract<Transport, 'http' | 'lambda'>;
}

export interface GraphQLHttpRequest {
  method: string;
  /** The query string, with or without its leading `?`. */
  search: string;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: RequestHeaders;
  /** The body as it arrives; read here, under the body limit. Ignored unless the method is POST. */
  body?: BodySource | undefined;
  /** The platform's id of the request (Lambda's), used when the client sent no sane `x-request-id`. */
  requestId?: string | undefined;
  /** The HTTP server span the operation's trace hangs under. */
  trace?: TraceParent | undefined;
}

/**
 * A request's headers, looked up by lower-case name (repeated ones joined with `, `), and all of
 * them in turn: Apollo's `HeaderMap` is one; node:http's adapter reads `req.headers` as it is, and
 * a map is made only for a request that goes to Apollo Server.
 */
export interface RequestHeaders extends Iterable<[string, string]> {
  get(name: string): string | undefined;
}

export interface GraphQLHttpResponse {
  status: number;
  /** Lower-case names. */
  headers: Map<string, string>;
  body: string;
  /** A cache hit's compressed bodies (report/answer.ts): a transport that compresses reuses them. */
  encoded?: EncodedBodies | undefined;
}

/** A request read as GraphQL over HTTP: one operation, a refusal of its body, or one for Apollo Server. */
export type ReadRequest =
  | { kind: 'operation'; operation: OperationRequest }
  | { kind: 'refused'; error: GraphQLError; status: number }
  | { kind: 'edge'; body: unknown };

/** The media types of a single answer, the first preferred on a tie (Apollo Server's). */
const JSON_TYPE = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8';
const ANSWER_TYPES = [JSON_TYPE, GRAPHQL_RESPONSE_TYPE, 'application/json; callbackSpec=1.0; charset=utf-8'];

/** The errors that a 200 carries for an application/json client (GraphQL over HTTP's legacy rule). */
const DOCUMENT_ERRORS: ReadonlySet<unknown> = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
]);

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
export function isFresh(headers: { get(name: string): string | undefined }, etag: string): boolean {
  const noneMatch = headers.get('if-none-match');
  if (!noneMatch) return false;
  // A client that asks for an end-to-end reload gets the full answer.
  if (/(?:^|,)\s*no-cache\s*(?:,|$)/.test(headers.get('cache-control') ?? '')) return false;
  if (noneMatch.trim() === '*') return true;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return noneMatch.split(',').some((tag) => strip(tag) === strip(etag));
}

/** True when the Accept header names application/json and not the GraphQL response type. */
export function acceptsOnlyJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  return types.includes('application/json') && !types.includes('application/graphql-response+json');
}

/**
 * Accept headers seen lately and the answer type each negotiates: a client sends the same one
 * every time. At most 64 of them, none longer than 256 characters.
 */
const answerTypes = new Map<string, string | null>();
const ANSWER_TYPES_KEPT = 64;
const ANSWER_TYPE_KEY_MAX = 256;

/** The Content-Type of an answer for this Accept header (null: the client accepts neither JSON type). */
export function answerTypeFor(accept: string | undefined): string | null {
  if (!accept) return JSON_TYPE;
  let type = answerTypes.get(accept);
  if (type === undefined) {
    type = new Negotiator({ headers: { accept } }).mediaType(ANSWER_TYPES) ?? null;
    if (accept.length <= ANSWER_TYPE_KEY_MAX) {
      if (answerTypes.size >= ANSWER_TYPES_KEPT) answerTypes.clear();
      answerTypes.set(accept, type);
    }
  }
  return type;
}

/** The headers of every answer to an operation over HTTP. */
const baseHeadersOf = (answerType: string | null, requestId: string): Map<string, string> =>
  new Map([
    ['content-type', answerType ?? JSON_TYPE],
    ['cache-control', NO_STORE],
    ['x-request-id', requestId],
  ]);

/** No query string: what a POST's parameters are read from (never written to). */
const NO_SEARCH = new URLSearchParams();

/**
 * Reads a request's body (POST) and fields as GraphQL over HTTP, under the body limit. A POST
 * body is read as JSON only when its Content-Type says so (another one leaves it unread, and the
 * request goes to Apollo Server, which refuses it).
 */
export async function readGraphQLHttpRequest(
  request: Pick<GraphQLHttpRequest, 'method' | 'search' | 'body'> & { header: (name: string) => string | undefined },
  maxBodyBytes: number,
): Promise<ReadRequest> {
  const method = request.method.toUpperCase();
  let body: unknown;
  if (method === 'POST') {
    try {
      const text = await readBody(request.body ?? '', {
        limit: maxBodyBytes,
        contentLength: request.header('content-length'),
        contentEncoding: request.header('content-encoding'),
      });
      const { essence, charset } = mediaTypeOf(request.header('content-type'));
      if (essence === 'application/json') body = parseJsonBody(text, charset);
    } catch (error) {
      if (!(error instanceof BodyRefused)) throw error;
      const code = error.status === 413 ? ErrorCode.PAYLOAD_TOO_LARGE : 'BAD_REQUEST';
      return {
        kind: 'refused',
        status: error.status,
        error: new GraphQLError(error.message, { extensions: { code, http: { status: error.status } } }),
      };
    }
  }
  // A POST's fields are its body's; only a GET reads the query string.
  const search = method === 'GET' ? new URLSearchParams(request.search) : NO_SEARCH;
  if (envelopeProblem(method, body, search, request.header('content-type'))) return { kind: 'edge', body };
  const params = method === 'GET' ? Object.fromEntries(search) : body;
  return { kind: 'operation', operation: operationRequestOf(params, method) };
}

/**
 * Answers one GraphQL request over HTTP. Never throws for anything a client sent; an
 * unexpected failure (a bug) rejects, and the adapter answers 500.
 */
export async function handleGraphQLHttp(
  request: GraphQLHttpRequest,
  { pipeline, apollo, transport }: GraphQLHttpRuntime,
): Promise<GraphQLHttpResponse> {
  const { headers } = request;
  const header = (name: string) => headers.get(name);
  const requestId = requestIdOf(headers.get('x-request-id'), request.requestId);
  const answerType = answerTypeFor(headers.get('accept'));
  const read = await readGraphQLHttpRequest(
    { method: request.method, search: request.search, body: request.body, header },
    pipeline.limits.maxBodyBytes,
  );
  if (read.kind === 'refused') return refused(pipeline, transport, requestId, answerType, [read.error], read.status);
  if (read.kind === 'edge') {
    const early = pipeline.admission.unreadable({ method: request.method, header });
    if (early) return refused(pipeline, transport, requestId, answerType, early.errors, early.status);
    return edge(request, read.body, apollo, pipeline, transport, requestId);
  }
  if (answerType === null) {
    const message = `An 'accept' header was provided for this request which does not accept ${JSON_TYPE} or ${GRAPHQL_RESPONSE_TYPE}`;
    const error = new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 406 } } });
    return refused(pipeline, transport, requestId, answerType, [error], 406);
  }

  const served = await pipeline.serve(
    { operation: read.operation, header, requestId, trace: request.trace },
    transport,
  );
  // Admission refuses a subscription over HTTP: nothing else opens a stream.
  if ('events' in served) throw new Error('A subscription opened over HTTP');
  const out = baseHeadersOf(answerType, requestId);
  for (const [name, value] of served.headers) out.set(name, value);
  let status = served.status;
  if (
    status === 400 &&
    served.result.data === undefined &&
    served.result.errors?.every((error) => DOCUMENT_ERRORS.has(error.extensions?.code)) &&
    acceptsOnlyJson(headers.get('accept'))
  ) {
    // Legacy clients read the error list only from a 200.
    status = 200;
  }
  const etag = out.get('etag');
  if (etag !== undefined && request.method.toUpperCase() === 'GET' && status === 200 && isFresh(headers, etag)) {
    out.delete('content-type');
    return { status: 304, headers: out, body: '' };
  }
  return { status, headers: out, body: served.body, encoded: served.encoded };
}

/** A refusal before the core: masked, logged and counted by the reporter, with the base headers. */
function refused(
  pipeline: Pipeline,
  transport: Transport,
  requestId: string,
  answerType: string | null,
  errors: GraphQLError[],
  status: number,
): GraphQLHttpResponse {
  const answer = pipeline.reporter.refuse(errors, status, {
    transport,
    operationName: null,
    startedAt: performance.now(),
    requestId,
  });
  return { status: answer.status, headers: baseHeadersOf(answerType, requestId), body: answer.body };
}

/** Apollo's map of a request's headers. */
function headerMapOf(headers: RequestHeaders): HeaderMap {
  if (headers instanceof HeaderMap) return headers;
  const map = new HeaderMap();
  for (const [name, value] of headers) map.set(name, value);
  return map;
}

/** A request that is not one operation: Apollo Server's answer, logged and counted like any refusal. */
async function edge(
  request: GraphQLHttpRequest,
  body: unknown,
  apollo: ApolloEdge,
  pipeline: Pipeline,
  transport: Transport,
  requestId: string,
): Promise<GraphQLHttpResponse> {
  const startedAt = performance.now();
  const httpGraphQLRequest: HTTPGraphQLRequest = {
    method: request.method.toUpperCase(),
    headers: headerMapOf(request.headers),
    search: request.search,
    body,
  };
  const response = await apollo.executeHTTPGraphQLRequest({ httpGraphQLRequest, context: async () => ({}) });
  let text = '';
  if (response.body.kind === 'complete') text = response.body.string;
  else for await (const chunk of response.body.asyncIterator) text += chunk;
  const status = response.status ?? 200;
  let errors: GraphQLFormattedError[] = [];
  try {
    errors = (JSON.parse(text) as { errors?: GraphQLFormattedError[] }).errors ?? [];
  } catch {
    // Not JSON: reported without its errors.
  }
  if (status >= 500) {
    pipeline.log.error({ requestId, status }, 'Apollo Server answered a request the request core should have served');
  }
  pipeline.reporter.report({ transport, operationName: null, startedAt, requestId }, newRequestCost(), errors);
  const headers = new Map<string, string>([...response.headers]);
  headers.set('x-request-id', requestId);
  headers.set('cache-control', NO_STORE);
  return { status, headers, body: text };
}
