/**
 * GraphQL over HTTP: a client that accepts only `application/json` (not
 * `application/graphql-response+json`) SHOULD get 200 for a document that fails to parse or
 * validate, or variables that fail to coerce: legacy clients read the error list only from a
 * 200. Apollo answers 400 to everyone; this plugin answers those clients 200. Requests refused
 * before parsing (CSRF prevention, a missing query, a body-parser error) keep their 400.
 */
import type { ApolloServerPlugin } from '@apollo/server';

/** The request errors that a 200 carries for an application/json client. */
const DOCUMENT_ERRORS: ReadonlySet<unknown> = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
]);

/** True when the Accept header names application/json and not the GraphQL response type. */
export function acceptsOnlyJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  return types.includes('application/json') && !types.includes('application/graphql-response+json');
}

export function jsonErrorStatusPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ request, response }) {
          if (response.http.status !== 400 || response.body.kind !== 'single') return;
          const { errors, data } = response.body.singleResult;
          if (data !== undefined || !errors?.length) return;
          if (!errors.every((error) => DOCUMENT_ERRORS.has(error.extensions?.code))) return;
          if (acceptsOnlyJson(request.http?.headers.get('accept'))) response.http.status = 200;
        },
      };
    },
  };
}
