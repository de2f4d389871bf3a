/**
 * The settled value of an operation (`Answer`), which every transport writes out as it is, and
 * its JSON: made once, in Apollo's field order, from its parts' JSON where they are known (the
 * executor's `dataJson`, a cache hit's stored data, the cost written from its numbers); its
 * `result` parsed back from the JSON only when a transport reads it.
 */
import type { FormattedExecutionResult } from 'graphql';
import type { RequestCost } from '../../db/capacity.js';
import type { CacheOutcome } from '../responseCache/cacheOutcome.js';

/**
 * The settled value of one operation (or one subscription event), which every transport writes
 * out as it is: the answer's JSON (`body`), the status and headers its errors call for, what it
 * cost and what the response cache did.
 */
export interface Answer {
  /** The answer as a client receives it (masked errors, `extensions.cost`): parsed from `body` when first read. */
  readonly result: FormattedExecutionResult;
  /** The answer's JSON: what HTTP, the Lambda and SSE write. */
  readonly body: string;
  /** The HTTP status: from the errors' `extensions.http` as Apollo Server reads it, 400 for an answer refused whole. */
  status: number;
  /** Headers the errors ask for (`www-authenticate`, `allow`), and the caching headers of a public answer (serve.ts). */
  headers: Map<string, string>;
  cost: RequestCost;
  /** What the response cache did (undefined: nothing). */
  cache?: CacheOutcome | undefined;
  /** Refused before anything executed (admission, the token): no data, and WebSocket answers it as an `error` message. */
  refused: boolean;
  /** A subscription refused while opening (FORBIDDEN, a missing order): SSE answers it without a stream. */
  notOpened?: boolean | undefined;
  /** The source event of a subscription result (SSE numbers its messages after its `seq`). */
  event?: unknown;
  operationName: string | null;
  /**
   * A cache hit's compressed bodies, kept with its entry: the same bytes on every hit, so a
   * transport that compresses asks here first and keeps what it made (node:http's send.ts).
   */
  encoded?: EncodedBodies | undefined;
}

/** Compressed forms of one body, by content coding (`br`, `gzip`, `deflate`). */
export interface EncodedBodies {
  get(encoding: string): Buffer | undefined;
  keep(encoding: string, bytes: Buffer): void;
}

/**
 * The JSON of an answer without errors from its parts' JSON: byte for byte what serializing the
 * answer would give, since `JSON.stringify(JSON.parse(text))` is `text` for any text
 * `JSON.stringify` made (GraphQL response keys are names, never array indices). A cache hit
 * writes its stored data this way.
 */
export const answerJson = (dataJson: string, extensionsJson: string): string =>
  `{"data":${dataJson},"extensions":${extensionsJson}}`;

/**
 * A result's JSON in Apollo's field order (errors, data, extensions), with `data`'s and the
 * extensions' when they are known.
 */
export function jsonOf(
  result: FormattedExecutionResult,
  dataJson: string | undefined,
  extensionsJson?: string,
): string {
  let json = '';
  if (result.errors !== undefined) json = `"errors":${JSON.stringify(result.errors)}`;
  if (result.data !== undefined) json += `${json ? ',' : ''}"data":${dataJson ?? JSON.stringify(result.data)}`;
  if (result.extensions !== undefined) {
    json += `${json ? ',' : ''}"extensions":${extensionsJson ?? JSON.stringify(result.extensions)}`;
  }
  return `{${json}}`;
}

/** Where an Answer keeps its parsed `result` (or nothing, until it is first read). */
const RESULT = Symbol('result');
type Settled = Answer & { [RESULT]?: FormattedExecutionResult | undefined };

/** The one getter every Answer shares, instead of a closure and an accessor per answer. */
const answerPrototype = {
  get result(): FormattedExecutionResult {
    const answer = this as unknown as Settled;
    return (answer[RESULT] ??= JSON.parse(answer.body) as FormattedExecutionResult);
  },
};

/** An Answer whose `result` is parsed from its body on first use (HTTP never asks). */
export function answerOf(fields: Omit<Answer, 'result'>, result?: FormattedExecutionResult): Answer {
  const answer = Object.assign(Object.create(answerPrototype) as Settled, fields);
  answer[RESULT] = result;
  return answer;
}
