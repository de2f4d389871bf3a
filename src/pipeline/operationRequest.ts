/** The GraphQL-over-HTTP request fields, from a JSON body or GET parameters, as admission takes them. */
import type { OperationRequest } from './admission.js';

const jsonOrSelf = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The id of a document sent without its text, by any client's convention: Apollo's
 * `extensions.persistedQuery.sha256Hash`, GraphQL-over-HTTP's `documentId` (`sha256:<hex>`),
 * Relay's `doc_id`. Undefined when the request names none.
 */
export function documentIdOf(
  params: Record<string, unknown>,
  extensions: unknown = jsonOrSelf(params.extensions),
): string | undefined {
  const persisted = isRecord(extensions) ? extensions.persistedQuery : undefined;
  const hash = isRecord(persisted) ? persisted.sha256Hash : undefined;
  if (typeof hash === 'string') return hash;
  if (typeof params.documentId === 'string') return params.documentId.replace(/^sha256:/, '');
  if (typeof params.doc_id === 'string') return params.doc_id;
  return undefined;
}

/**
 * Reads `query`, `operationName`, `variables` and the document id (documentIdOf);
 * GET parameters carry the last two as JSON strings. Anything else (a batch, a string) reads
 * as a request without a document, which admission refuses.
 */
export function operationRequestOf(params: unknown): OperationRequest {
  if (!isRecord(params)) return {};
  const extensions = jsonOrSelf(params.extensions);
  const variables = jsonOrSelf(params.variables);
  return {
    query: typeof params.query === 'string' ? params.query : undefined,
    persistedHash: documentIdOf(params, extensions),
    operationName: typeof params.operationName === 'string' ? params.operationName : undefined,
    variables: isRecord(variables) ? variables : undefined,
  };
}

/**
 * The request as Apollo Server reads it: a `documentId` or `doc_id` becomes the
 * `extensions.persistedQuery` Apollo resolves through the trusted documents (by their sha256,
 * whatever id the client sent). Other requests come back unchanged.
 */
export function withPersistedQuery(
  params: Record<string, unknown>,
  sha256Of: (id: string) => string | undefined,
): Record<string, unknown> {
  if (typeof params.documentId !== 'string' && typeof params.doc_id !== 'string') return params;
  const id = documentIdOf(params);
  if (id === undefined) return params;
  const extensions = jsonOrSelf(params.extensions);
  const { documentId: _documentId, doc_id: _docId, ...rest } = params;
  const persistedQuery = { version: 1, sha256Hash: sha256Of(id) ?? id };
  const merged = { ...(isRecord(extensions) ? extensions : {}), persistedQuery };
  // GET parameters carry extensions as JSON text.
  return { ...rest, extensions: typeof params.extensions === 'string' ? JSON.stringify(merged) : merged };
}
