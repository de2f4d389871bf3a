/**
 * The response-size ceiling: the last bound behind the cost limit (which bounds what a query
 * may ask for, not what the data holds). An answer whose JSON exceeds MAX_RESPONSE_BYTES is
 * replaced by one RESPONSE_TOO_LARGE error (report.ts, which makes the JSON once and measures
 * it): a client gets a clear refusal, never a truncated document.
 */
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../../errors.js';

/** The error that replaces an answer over the ceiling. */
export const responseTooLarge = (maxBytes: number): GraphQLFormattedError => ({
  message: `The response would exceed the limit of ${maxBytes} bytes: ask for fewer or smaller fields, or smaller pages`,
  extensions: { code: ErrorCode.RESPONSE_TOO_LARGE, maxBytes },
});

/**
 * An execution's result, carrying the JSON of its `data` when the executor wrote the answer as
 * JSON (the planned executor does, plan/answer.ts). `JSON.stringify(JSON.parse(text))` is `text`
 * for any text `JSON.stringify` made (GraphQL response keys are names, never array indices), so
 * the report and the response cache write the text as it is instead of serializing `data`.
 */
export interface ExecutedResult extends ExecutionResult {
  /** The JSON of `data` (undefined: not known, serialize `data`). */
  readonly dataJson?: string | undefined;
}
