/**
 * CSRF prevention, for every HTTP transport (the node server and Lambda), in place of Apollo
 * Server's own: a "simple" request (a GET, or a POST a browser may send cross-site without a
 * preflight: no content type, `text/plain`, a form) must carry `apollo-require-preflight` or
 * `x-apollo-operation-name`, except a GET whose document is trusted and is a query.
 *
 * Why that exception is safe (docs/decisions/csrf-trusted-get.md): a GET never runs a mutation
 * (Apollo answers 405), tokens travel only in `Authorization`, which a cross-site page cannot
 * make a browser send, so such a request runs anonymously, and its document is one a published
 * app already sends. What stays refused is a cross-site GET of an arbitrary document: the
 * probing (timing, XS-Search) CSRF prevention exists for. urql sends its queries as GET
 * without a custom header by default; with its documents trusted it works as is.
 */
import { getOperationAST, GraphQLError, OperationTypeNode, parse } from 'graphql';
import type { OperationRequest, Refusal } from './admission.js';
import { sha256 } from './admission.js';
import type { DocumentLookup } from './trustedDocuments.js';

export const PREFLIGHT_HEADERS = ['x-apollo-operation-name', 'apollo-require-preflight'] as const;
const SIMPLE_CONTENT_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/** Apollo's wording, so clients that match on it keep working. */
const CSRF_MESSAGE =
  "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header (with a type that is not one of application/x-www-form-urlencoded, multipart/form-data, text/plain) or provide a non-empty value for one of the following headers: x-apollo-operation-name, apollo-require-preflight\n";

/** True when a browser could have sent this request cross-site without asking first. */
export function isSimpleRequest(header: (name: string) => string | undefined): boolean {
  const contentType = header('content-type');
  if (contentType !== undefined) {
    const essence = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (!SIMPLE_CONTENT_TYPES.includes(essence)) return false;
  }
  return !PREFLIGHT_HEADERS.some((name) => (header(name) ?? '') !== '');
}

export function createCsrfCheck(documents: DocumentLookup) {
  // Whether a trusted document's operation is a query, by sha256 and operation name: a trusted
  // set is bounded, and so is this cache.
  const queries = new Map<string, boolean>();
  const MAX_CACHED = 20_000;

  function trustedQuery(request: OperationRequest): boolean {
    const id =
      typeof request.query === 'string' && request.query !== '' ? sha256(request.query) : request.persistedHash;
    if (typeof id !== 'string') return false;
    const text = documents.get(id);
    if (text === undefined) return false;
    const key = `${id}\n${request.operationName ?? ''}`;
    let isQuery = queries.get(key);
    if (isQuery === undefined) {
      try {
        const operation = getOperationAST(parse(text), request.operationName)?.operation;
        // Subscriptions (SSE) only read, like queries.
        isQuery = operation === OperationTypeNode.QUERY || operation === OperationTypeNode.SUBSCRIPTION;
      } catch {
        isQuery = false;
      }
      if (queries.size >= MAX_CACHED) queries.clear();
      queries.set(key, isQuery);
    }
    return isQuery;
  }

  /** Null when the request may go on; else the 400 refusal in Apollo's shape. */
  return function csrfRefusal(
    method: string,
    header: (name: string) => string | undefined,
    request: OperationRequest,
  ): Refusal | null {
    if (!isSimpleRequest(header)) return null;
    if (method === 'GET' && trustedQuery(request)) return null;
    return {
      ok: false,
      status: 400,
      errors: [new GraphQLError(CSRF_MESSAGE, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } })],
    };
  };
}

export type CsrfCheck = ReturnType<typeof createCsrfCheck>;
