/**
 * Decides what a client sees of an error. Errors carrying a code from our enum (or one of
 * Apollo's request-error codes) pass through without stack traces; DynamoDB being unreachable
 * or throttling becomes SERVICE_UNAVAILABLE; everything else is logged and masked, so no AWS
 * message, table name or key ever reaches a response.
 */
import { unwrapResolverError } from '@apollo/server/errors';
import type { GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { APOLLO_REQUEST_ERROR_CODES, ErrorCode } from '../../errors.js';
import { InvalidKeyError } from '../../table/keys.js';

// INTERNAL_SERVER_ERROR is not among them: Apollo gives that code to every error that has none,
// so an error carrying it is exactly the kind that must be masked.
const CLIENT_CODES: ReadonlySet<string> = new Set(
  [...Object.values(ErrorCode), ...APOLLO_REQUEST_ERROR_CODES].filter(
    (code) => code !== ErrorCode.INTERNAL_SERVER_ERROR,
  ),
);

/** graphql-js's hints that name schema members: "Did you mean ...?" (fields, enum values, fragments). */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

const UNAVAILABLE_ERROR_NAMES = new Set([
  'TimeoutError',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
]);
const UNAVAILABLE_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

/** True for failures that say "DynamoDB is not answering right now", not "this request is wrong". */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (UNAVAILABLE_ERROR_NAMES.has(error.name)) return true;
  if (typeof code === 'string' && UNAVAILABLE_NETWORK_CODES.has(code)) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isUnavailable(cause);
}

/**
 * `hideSuggestions` (set where introspection is off) removes "Did you mean ...?" hints, which
 * would otherwise spell out field names and enum values a client has no other way to list.
 */
export type FormatError = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

export function createFormatError(
  log: Logger,
  { hideSuggestions = false }: { hideSuggestions?: boolean } = {},
): FormatError {
  return (formatted, error) => {
    const code = formatted.extensions?.code;
    const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
    if (typeof code === 'string' && CLIENT_CODES.has(code)) {
      const message = hideSuggestions ? formatted.message.replace(SUGGESTION, '') : formatted.message;
      return { ...formatted, message, extensions };
    }
    const original = unwrapResolverError(error);
    // The key module refuses ids before they become keys; it knows no GraphQL, so its
    // refusal gets its code here.
    if (original instanceof InvalidKeyError) {
      return {
        message: original.message,
        ...(formatted.locations ? { locations: formatted.locations } : {}),
        ...(formatted.path ? { path: formatted.path } : {}),
        extensions: { code: ErrorCode.BAD_USER_INPUT, argumentName: original.argumentName },
      };
    }
    // Apollo's own request errors without a code (e.g. "provided sha does not match query")
    // carry a 4xx status: the client's mistake, in Apollo's words, safe to show.
    const status = (original as { extensions?: { http?: { status?: unknown } } } | null)?.extensions?.http?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return { message: formatted.message, extensions: { code: 'BAD_REQUEST' } };
    }
    if (isUnavailable(original)) {
      log.warn({ err: original, path: formatted.path }, 'DynamoDB unavailable');
      return {
        message: 'The database is unavailable; try again shortly',
        path: formatted.path,
        extensions: { code: ErrorCode.SERVICE_UNAVAILABLE },
      };
    }
    log.error({ err: original, path: formatted.path }, 'unexpected error');
    return {
      message: 'Internal server error',
      path: formatted.path,
      extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR },
    };
  };
}
