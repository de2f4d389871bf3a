/**
 * Apollo Server at the edge of GraphQL over HTTP, through its public API only
 * (`executeHTTPGraphQLRequest`): it answers every HTTP request that is not one GraphQL operation
 * as GraphQL over HTTP reads one (a method other than GET and POST, a POST body that is not a
 * JSON object, fields of the wrong type, a GET with a body's content type or a parameter given
 * twice: `envelopeProblem` in operationRequest.ts), with its own status codes, headers and
 * words. Operations themselves are the request core's (serve.ts): Apollo's public API takes a
 * document only as text it parses and validates itself, and has no hook between reading a
 * request and parsing it, so a document admitted, and an answer stored, by the core could only
 * reach it through its internals (docs/decisions/request-core.md).
 *
 * No operation ever runs here: a request that reaches Apollo's request pipeline (its envelope
 * passed after all) fails at once, and the handler answers it as a server error.
 */
import { ApolloServer } from '@apollo/server';
import type { ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import type { Pipeline } from '../pipeline.js';

/** Thrown when a request the core judged malformed turns out well-formed to Apollo: a bug to fix. */
export class EnvelopeMismatchError extends Error {
  override name = 'EnvelopeMismatchError';
}

export function createApolloEdge(pipeline: Pick<Pipeline, 'schema' | 'formatError'>) {
  const noOperations: ApolloServerPlugin = {
    async requestDidStart() {
      throw new EnvelopeMismatchError('Apollo Server was handed a request the request core should have served');
    },
  };
  return new ApolloServer({
    schema: pipeline.schema,
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      noOperations,
    ],
    allowBatchedHttpRequests: false,
    // The core's CSRF stage (csrf.ts) runs before any request reaches Apollo.
    csrfPrevention: false,
    persistedQueries: false,
    formatError: pipeline.formatError,
    includeStacktraceInErrorResponses: false,
    // Apollo logs the failure of `noOperations` at error level; the handler logs it with the request.
    logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    // The process owns SIGINT/SIGTERM (main.ts): it stops the server, then the database.
    stopOnTerminationSignals: false,
  });
}

export type ApolloEdge = ReturnType<typeof createApolloEdge>;
