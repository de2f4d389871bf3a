/**
 * How an admission stage refuses an operation: a list of coded GraphQL errors, with the HTTP
 * status and headers in their `extensions.http` as Apollo Server reads them, and the status. No
 * stage throws at its caller; each answers a `Refusal` (admission.ts).
 */
import { GraphQLError } from 'graphql';

export interface Refusal {
  ok: false;
  errors: GraphQLError[];
  /** The HTTP status of the refusal (WebSocket and Lambda clients see the same codes). */
  status: number;
}

/** A refusal of `status` with `errors`. */
export const refuse = (status: number, ...errors: GraphQLError[]): Refusal => ({ ok: false, errors, status });

/** A client's error of `code`, HTTP 400. */
export const refusal = (message: string, code: string, extensions: Record<string, unknown> = {}): GraphQLError =>
  new GraphQLError(message, { extensions: { ...extensions, code, http: { status: 400 } } });
