import { GraphQLError } from 'graphql';

/**
 * Every `extensions.code` a client may see on a GraphQL error. Anything thrown that is not a
 * GraphQLError with one of these codes is masked as INTERNAL_SERVER_ERROR and logged.
 */
export const ErrorCode = {
  /** An argument or variable was refused: a malformed id, a forged cursor, a page size over 100 (`extensions.argumentName` names it). */
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  /** Anything unexpected; the message is always `Internal server error`, the details are only logged. */
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
  /** DynamoDB is unreachable or throttling, or left keys unprocessed after every retry; retry later. */
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  /** A write kept conflicting with concurrent writes; nothing changed, retrying is safe. */
  CONFLICT: 'CONFLICT',
  /** No valid bearer token where one is needed (or an invalid one was sent). */
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** Signed in, but not allowed to do this. */
  FORBIDDEN: 'FORBIDDEN',
  /** The request exceeds a query limit (depth, cost, aliases, tokens, directives). */
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  /** The field needs a table migration that has not been applied (`npm run migrate`). */
  MIGRATION_PENDING: 'MIGRATION_PENDING',
  /**
   * A WebSocket connection already runs as many operations as it may, or the client (a signed-in
   * user, else an address) as many subscriptions across its connections (`extensions.limit` names
   * the setting): complete one first.
   */
  TOO_MANY_OPERATIONS: 'TOO_MANY_OPERATIONS',
  /**
   * The client (a signed-in user, else an address) already holds as many WebSockets and
   * Server-Sent Events streams open on this server as it may (CLIENT_MAX_CONNECTIONS, HTTP 429):
   * close one first. A WebSocket over the bound is closed with 1008 and this reason.
   */
  TOO_MANY_CONNECTIONS: 'TOO_MANY_CONNECTIONS',
  /**
   * A Server-Sent Events stream resumed with a Last-Event-ID older than the events this
   * instance still holds: events may have been missed, so refetch what the page shows.
   */
  EVENTS_MISSED: 'EVENTS_MISSED',
  /** The request body (or WebSocket message) exceeds MAX_BODY_BYTES. */
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  /** The answer would exceed MAX_RESPONSE_BYTES; nothing of it is sent. */
  RESPONSE_TOO_LARGE: 'RESPONSE_TOO_LARGE',
  /** The operation exceeded a budget while it ran (DynamoDB requests, read capacity, result entries or bytes: `extensions.budget`); nothing of its answer is sent. */
  BUDGET_EXCEEDED: 'BUDGET_EXCEEDED',
  /**
   * A subscription could not open: the reads it needs exceed what subscribing may read per viewer
   * or per server (`extensions.limit` names the setting, `extensions.retryAfterSeconds` when to retry).
   */
  RATE_LIMITED: 'RATE_LIMITED',
  /** PERSISTED_ONLY is on and the document is not a trusted one (the server's manifest, or a published app manifest). */
  PERSISTED_QUERY_REQUIRED: 'PERSISTED_QUERY_REQUIRED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The codes Apollo Server itself puts on request errors; these pass through unmasked. */
export const APOLLO_REQUEST_ERROR_CODES: ReadonlySet<string> = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
]);

/** A client sent something we refuse: a malformed id, a forged cursor, a page size over the cap. */
export class BadUserInputError extends GraphQLError {
  constructor(message: string, argumentName?: string) {
    super(message, {
      extensions: { code: ErrorCode.BAD_USER_INPUT, ...(argumentName ? { argumentName } : {}) },
    });
  }
}

/**
 * DynamoDB could not be reached or kept refusing work; the client may retry later. The HTTP
 * status stays 200: other fields of the same response may hold data (GraphQL over HTTP).
 */
export class ServiceUnavailableError extends GraphQLError {
  constructor(message = 'The database is unavailable; try again shortly') {
    super(message, { extensions: { code: ErrorCode.SERVICE_UNAVAILABLE } });
  }
}

/**
 * Ends an open subscription whose events may have a gap: its Redis subscription was lost and the
 * topic's history no longer reaches back to the last event it received (or Redis stayed away).
 */
export class EventsMissedError extends GraphQLError {
  constructor(
    message = 'Events were published while this server could not hear them: refetch what you show and subscribe again',
  ) {
    super(message, { extensions: { code: ErrorCode.EVENTS_MISSED } });
  }
}

/** Thrown by the data layer when DynamoDB left keys unprocessed after every retry. */
export class IncompleteBatchError extends ServiceUnavailableError {
  constructor(
    readonly unprocessedKeys: number,
    readonly attempts: number,
  ) {
    super(`The database left ${unprocessedKeys} item(s) unread after ${attempts} attempts; try again shortly`);
  }
}

/** Missing or invalid credentials. Thrown while building the context, it answers the whole request with 401. */
export class UnauthenticatedError extends GraphQLError {
  constructor(message: string, status?: number) {
    super(message, {
      extensions: {
        code: ErrorCode.UNAUTHENTICATED,
        // RFC 6750: a 401 names the scheme and why the token was refused.
        ...(status
          ? { http: { status, headers: new Map([['www-authenticate', 'Bearer error="invalid_token"']]) } }
          : {}),
      },
    });
  }
}

/** The signed-in viewer may not do this. */
export class ForbiddenError extends GraphQLError {
  constructor(message: string) {
    super(message, { extensions: { code: ErrorCode.FORBIDDEN } });
  }
}
