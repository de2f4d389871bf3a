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
 * The JSON of results that passed the size check, keyed by their `data` (or, without data, their
 * `errors`): Apollo's answer reuses it (stringifyResult below) instead of serializing the same
 * result a second time. A WeakMap: an entry lives as long as its result.
 */
const serialized = new WeakMap<object, { result: SizedResult; json: string }>();

/** The three fields of a result, in the order Apollo writes them (its orderExecutionResultFields). */
const ordered = (result: SizedResult): SizedResult => ({
  errors: result.errors,
  data: result.data,
  extensions: result.extensions,
});
const keyOf = (result: SizedResult): object | undefined =>
  typeof result.data === 'object' && result.data !== null ? result.data : result.errors;
const onlyResultFields = (result: object): boolean =>
  Object.keys(result).every((key) => key === 'data' || key === 'errors' || key === 'extensions');

/**
 * The JSON of `data` objects parsed from it or serialized already (the response cache's hits
 * and stores): a result without errors around one is written with that text instead of
 * serializing the data again. `JSON.stringify(JSON.parse(text))` is `text` for any text
 * `JSON.stringify` made (GraphQL response keys are names, never array indices).
 */
const dataJson = new WeakMap<object, string>();

/** Remembers that `data` serializes to `json`; returns `data`. */
export function withKnownJson<T extends object>(data: T, json: string): T {
  dataJson.set(data, json);
  return data;
}

/** JSON.stringify(ordered(result)), with the known text of its data when there is one. */
function jsonOf(result: SizedResult): string {
  const known =
    result.errors === undefined && typeof result.data === 'object' && result.data !== null
      ? dataJson.get(result.data)
      : undefined;
  if (known === undefined) return JSON.stringify(ordered(result));
  const extensions = result.extensions === undefined ? '' : `,"extensions":${JSON.stringify(result.extensions)}`;
  return `{"data":${known}${extensions}}`;
}

/**
 * `result` itself when its JSON fits in `maxBytes`, else a result carrying only the
 * RESPONSE_TOO_LARGE error (and the original extensions, e.g. the request's cost). A result
 * that fits is remembered with its JSON for stringifyResult.
 */
export function withinResponseSize<T extends SizedResult>(result: T, maxBytes: number): T | SizedResult {
  const plain = onlyResultFields(result);
  const json = plain ? jsonOf(result) : JSON.stringify(result);
  if (Buffer.byteLength(json, 'utf8') <= maxBytes) {
    const key = plain ? keyOf(result) : undefined;
    if (key) serialized.set(key, { result, json });
    return result;
  }
  return { errors: [responseTooLarge(maxBytes)], ...(result.extensions ? { extensions: result.extensions } : {}) };
}

/**
 * Apollo's `stringifyResult`, byte for byte its default (`JSON.stringify(value) + "\n"`), with
 * the JSON the size check made when `value` holds the very fields (the same objects) of a result
 * that passed it. The fields are compared by identity: a result rebuilt or re-costed after the
 * check is serialized afresh. Nothing changes a result's objects between the check (the last
 * step of willSendResponse) and Apollo's serialization.
 */
export function stringifyResult(value: SizedResult): string {
  const key = keyOf(value);
  const hit = key ? serialized.get(key) : undefined;
  if (
    hit &&
    hit.result.data === value.data &&
    hit.result.errors === value.errors &&
    hit.result.extensions === value.extensions
  ) {
    return `${hit.json}\n`;
  }
  return `${JSON.stringify(value)}\n`;
}
