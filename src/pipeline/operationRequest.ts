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
 * Reads `query`, `operationName`, `variables` and `extensions.persistedQuery.sha256Hash`;
 * GET parameters carry the last two as JSON strings. Anything else (a batch, a string) reads
 * as a request without a document, which admission refuses.
 */
export function operationRequestOf(params: unknown): OperationRequest {
  if (!isRecord(params)) return {};
  const extensions = jsonOrSelf(params.extensions);
  const variables = jsonOrSelf(params.variables);
  const persisted = isRecord(extensions) ? extensions.persistedQuery : undefined;
  const hash = isRecord(persisted) ? persisted.sha256Hash : undefined;
  return {
    query: typeof params.query === 'string' ? params.query : undefined,
    persistedHash: typeof hash === 'string' ? hash : undefined,
    operationName: typeof params.operationName === 'string' ? params.operationName : undefined,
    variables: isRecord(variables) ? variables : undefined,
  };
}
