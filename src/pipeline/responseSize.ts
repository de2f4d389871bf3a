/**
 * The response-size ceiling: the last bound behind the cost limit (which bounds what a query
 * may ask for, not what the data holds). An answer whose JSON exceeds `maxBytes` is replaced
 * by one RESPONSE_TOO_LARGE error: a client gets a clear refusal, never a truncated document.
 */
import type { GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../errors.js';

export interface SizedResult {
  data?: unknown;
  errors?: readonly GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
}

/** The error that replaces an answer over the ceiling. */
export const responseTooLarge = (maxBytes: number): GraphQLFormattedError => ({
  message: `The response would exceed the limit of ${maxBytes} bytes: ask for fewer or smaller fields, or smaller pages`,
  extensions: { code: ErrorCode.RESPONSE_TOO_LARGE, maxBytes },
});

/**
 * Pure: `result` itself when its JSON fits in `maxBytes`, else a result carrying only the
 * RESPONSE_TOO_LARGE error (and the original extensions, e.g. the request's cost).
 */
export function withinResponseSize<T extends SizedResult>(result: T, maxBytes: number): T | SizedResult {
  if (Buffer.byteLength(JSON.stringify(result), 'utf8') <= maxBytes) return result;
  return { errors: [responseTooLarge(maxBytes)], ...(result.extensions ? { extensions: result.extensions } : {}) };
}
