/**
 * Decides what a client sees of an error. Errors carrying a code from our enum (or one of
 * Apollo's request-error codes) pass through without stack traces; DynamoDB being unreachable
 * or throttling becomes SERVICE_UNAVAILABLE; everything else is logged and masked, so no AWS
 * message, table name or key ever reaches a response.
 */
import { unwrapResolverError } from '@apollo/server/errors';
import type { GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { APOLLO_REQUEST_ERROR_CODES, ErrorCode } from '../errors.js';

const CLIENT_CODES: ReadonlySet<string> = new Set([...Object.values(ErrorCode), ...APOLLO_REQUEST_ERROR_CODES]);

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

export function createFormatError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
    if (typeof code === 'string' && CLIENT_CODES.has(code)) return { ...formatted, extensions };
    const original = unwrapResolverError(error);
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
