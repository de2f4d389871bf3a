/**
 * The response-size ceiling: the last bound behind the cost limit (which bounds what a query
 * may ask for, not what the data holds). An answer whose JSON exceeds MAX_RESPONSE_BYTES is
 * replaced by one RESPONSE_TOO_LARGE error (report.ts, which makes the JSON once and measures
 * it): a client gets a clear refusal, never a truncated document.
 */
import type { GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../../errors.js';

/** The error that replaces an answer over the ceiling. */
export const responseTooLarge = (maxBytes: number): GraphQLFormattedError => ({
  message: `The response would exceed the limit of ${maxBytes} bytes: ask for fewer or smaller fields, or smaller pages`,
  extensions: { code: ErrorCode.RESPONSE_TOO_LARGE, maxBytes },
});

/**
 * The JSON of `data` objects whose text is known before anything serializes them: the planned
 * executor writes its answer as JSON (plan/answer.ts). `JSON.stringify(JSON.parse(text))` is
 * `text` for any text `JSON.stringify` made (GraphQL response keys are names, never array
 * indices), so the report and the response cache write the text as it is.
 */
const dataJson = new WeakMap<object, string>();

/** Remembers that `data` serializes to `json`; returns `data`. */
export function withKnownJson<T extends object>(data: T, json: string): T {
  dataJson.set(data, json);
  return data;
}

/** The JSON `data` is known to serialize to (undefined: not known, serialize it). */
export const knownJsonOf = (data: unknown): string | undefined =>
  typeof data === 'object' && data !== null ? dataJson.get(data) : undefined;
