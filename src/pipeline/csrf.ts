/**
 * CSRF prevention, for every HTTP transport (the node server, SSE and the Lambda), in place of
 * Apollo Server's own: a "simple" request (a GET, or a POST a browser may send cross-site
 * without a preflight: no content type, `text/plain`, a form) must carry
 * `apollo-require-preflight` or `x-apollo-operation-name`, except a GET that only reads:
 * - a GET whose operation is a query and which carries no ambient credentials (no `Cookie`);
 * - a GET of a trusted document whose operation is a query or a subscription.
 *
 * Why that is safe (docs/decisions/csrf-trusted-get.md): a GET never runs a mutation (admission
 * refuses one with 405, on every route), and the only credential this server reads is a Bearer
 * token in `Authorization`, which a browser never attaches by itself: a cross-site page can make
 * it send a GET only anonymously, to read what the attacker could read himself, at a cost
 * admission and the meter bound. Cookies are this server's business only if a front door turns
 * them into a token; a request that carries them needs the header like any other. urql sends its
 * queries as GET without a custom header by default.
 */
import { getOperationAST, GraphQLError, OperationTypeNode, parse } from 'graphql';
import type { ParseOptions } from 'graphql';
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

/** A browser's ambient credentials: a page on another site can make it send these. */
function carriesCookies(header: (name: string) => string | undefined): boolean {
  return (header('cookie') ?? '') !== '';
}

export function createCsrfCheck(documents: DocumentLookup, parseOptions: ParseOptions = {}) {
  // The operation type of a document, by sha256 and operation name. Bounded: a cleared map only
  // costs a parse again.
  const operations = new Map<string, OperationTypeNode | null>();
  const MAX_CACHED = 20_000;

  function operationOf(hash: string, text: string, operationName: string | null | undefined) {
    const key = `${hash}\n${operationName ?? ''}`;
    let operation = operations.get(key);
    if (operation === undefined) {
      try {
        // The parser's token limit applies here as in admission: this runs before it.
        operation = getOperationAST(parse(text, parseOptions), operationName)?.operation ?? null;
      } catch {
        operation = null;
      }
      if (operations.size >= MAX_CACHED) operations.clear();
      operations.set(key, operation);
    }
    return operation;
  }

  /** The operation the request would run, by its text or a trusted id; whether its text is trusted. */
  function operationRequested(request: OperationRequest) {
    const text = typeof request.query === 'string' && request.query !== '' ? request.query : undefined;
    const hash = text !== undefined ? sha256(text) : request.persistedHash;
    if (typeof hash !== 'string') return { trusted: false, operation: null };
    const source = documents.get(hash) ?? text;
    if (source === undefined) return { trusted: false, operation: null };
    return { trusted: documents.has(hash), operation: operationOf(hash, source, request.operationName) };
  }

  function readsOnly(header: (name: string) => string | undefined, request: OperationRequest): boolean {
    const { trusted, operation } = operationRequested(request);
    if (operation === OperationTypeNode.QUERY) return trusted || !carriesCookies(header);
    // Subscriptions (SSE) only read too, but hold a stream open: only a published app's.
    return trusted && operation === OperationTypeNode.SUBSCRIPTION;
  }

  /** Null when the request may go on; else the 400 refusal in Apollo's shape. */
  return function csrfRefusal(
    method: string,
    header: (name: string) => string | undefined,
    request: OperationRequest,
  ): Refusal | null {
    if (!isSimpleRequest(header)) return null;
    if (method === 'GET' && readsOnly(header, request)) return null;
    return {
      ok: false,
      status: 400,
      errors: [new GraphQLError(CSRF_MESSAGE, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } })],
    };
  };
}

export type CsrfCheck = ReturnType<typeof createCsrfCheck>;
