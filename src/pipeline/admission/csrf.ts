/**
 * CSRF prevention, a stage of admission (admission.ts) for every transport a browser can be
 * made to send (HTTP, the Lambda, SSE), in place of Apollo Server's own: a "simple" request (a
 * GET, or a POST a browser may send cross-site without a preflight: no content type,
 * `text/plain`, a form) must carry `apollo-require-preflight` or `x-apollo-operation-name`, except
 * a GET that only reads, as its admitted document shows:
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
import { GraphQLError, OperationTypeNode } from 'graphql';
import type { Refusal } from './refusal.js';

/** A request header by its lower-case name (repeated headers joined). */
export type RequestHeader = (name: string) => string | undefined;

export const PREFLIGHT_HEADERS = ['x-apollo-operation-name', 'apollo-require-preflight'] as const;
const SIMPLE_CONTENT_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/** Apollo's wording, so clients that match on it keep working. */
const CSRF_MESSAGE =
  "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header (with a type that is not one of application/x-www-form-urlencoded, multipart/form-data, text/plain) or provide a non-empty value for one of the following headers: x-apollo-operation-name, apollo-require-preflight\n";

/** True when a browser could have sent this request cross-site without asking first. */
export function isSimpleRequest(header: RequestHeader): boolean {
  const contentType = header('content-type');
  if (contentType !== undefined) {
    const essence = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (!SIMPLE_CONTENT_TYPES.includes(essence)) return false;
  }
  return !PREFLIGHT_HEADERS.some((name) => (header(name) ?? '') !== '');
}

/**
 * Whether a simple GET may run: its admitted document's operation (undefined: none) and whether
 * the document is a trusted one.
 */
export function readsOnly(header: RequestHeader, trusted: boolean, operation: OperationTypeNode | undefined): boolean {
  // A browser's ambient credentials: a page on another site can make it send these.
  if (operation === OperationTypeNode.QUERY) return trusted || (header('cookie') ?? '') === '';
  // Subscriptions (SSE) only read too, but hold a stream open: only a published app's.
  return trusted && operation === OperationTypeNode.SUBSCRIPTION;
}

/** The 400 refusal, in Apollo's shape. */
export const csrfRefusal = (): Refusal => ({
  ok: false,
  status: 400,
  errors: [new GraphQLError(CSRF_MESSAGE, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } })],
});
