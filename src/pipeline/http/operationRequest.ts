/**
 * The GraphQL-over-HTTP request fields, from a JSON body, GET parameters or a graphql-ws
 * `subscribe` payload, as admission takes them (`OperationRequest`), and the test an HTTP
 * request's fields must pass to be read as one operation at all (`envelopeProblem`).
 */
import type { OperationRequest } from '../admission/admission.js';

const jsonOrSelf = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);

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
 * Reads `query`, `operationName`, `variables`, the document id (documentIdOf) and the
 * extensions admission looks at; GET parameters carry `variables` and `extensions` as JSON
 * strings. Anything else (a batch, a string) reads as a request without a document, which
 * admission refuses.
 */
export function operationRequestOf(params: unknown, method?: string): OperationRequest {
  if (!isRecord(params)) return method === undefined ? {} : { method };
  const extensions = jsonOrSelf(params.extensions);
  const variables = jsonOrSelf(params.variables);
  const persisted = isRecord(extensions) ? extensions.persistedQuery : undefined;
  return {
    query: typeof params.query === 'string' ? params.query : undefined,
    persistedHash: documentIdOf(params, extensions),
    ...(persisted === undefined ? {} : { persistedVersion: isRecord(persisted) ? persisted.version : persisted }),
    operationName: typeof params.operationName === 'string' ? params.operationName : undefined,
    variables: isRecord(variables) ? variables : undefined,
    ...(isRecord(extensions) && extensions.cache === true ? { explain: true } : {}),
    ...(method === undefined ? {} : { method }),
  };
}

/**
 * True when Apollo Server would refuse these HTTP request fields before looking at a document:
 * a POST whose body is not a JSON object with at least one key, or whose `query`, `variables`,
 * `extensions` or `operationName` has the wrong type (variables and extensions as JSON text,
 * say); a GET with a Content-Type other than JSON, a parameter given twice, or `variables` or
 * `extensions` that are not JSON objects. Such requests go to Apollo Server, whose refusal (and its
 * wording) is the answer (graphqlHttp.ts).
 */
export function envelopeProblem(method: string, body: unknown, search: URLSearchParams, contentType?: string): boolean {
  if (method === 'POST') {
    if (!isRecord(body) || Object.keys(body).length === 0) return true;
    const { query, variables, extensions, operationName } = body;
    if (query && typeof query !== 'string') return true;
    if (typeof variables === 'string' || typeof extensions === 'string') return true;
    if (variables !== undefined && variables !== null && !isRecord(variables)) return true;
    if (extensions !== undefined && extensions !== null && !isRecord(extensions)) return true;
    return operationName !== undefined && operationName !== null && typeof operationName !== 'string';
  }
  if (method !== 'GET') return true;
  if (contentType !== undefined && (contentType.split(';')[0] ?? '').trim().toLowerCase() !== 'application/json') {
    return true;
  }
  for (const name of ['query', 'operationName', 'variables', 'extensions']) {
    if (search.getAll(name).length > 1) return true;
  }
  for (const name of ['variables', 'extensions']) {
    const value = search.get(name);
    if (value !== null && !isRecord(jsonOrSelf(value))) return true;
  }
  return false;
}
