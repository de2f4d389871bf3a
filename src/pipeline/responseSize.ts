/**
 * The response-size ceiling: the last bound behind the cost limit (which bounds what a query
 * may ask for, not what the data holds). An answer whose JSON exceeds MAX_RESPONSE_BYTES is
 * replaced by one RESPONSE_TOO_LARGE error (report.ts, which makes the JSON once and measures
 * it): a client gets a clear refusal, never a truncated document.
 */
import type { GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../errors.js';

/** The error that replaces an answer over the ceiling. */
export const responseTooLarge = (maxBytes: number): GraphQLFormattedError => ({
  message: `The response would exceed the limit of ${maxBytes} bytes: ask for fewer or smaller fields, or smaller pages`,
  extensions: { code: ErrorCode.RESPONSE_TOO_LARGE, maxBytes },
});
