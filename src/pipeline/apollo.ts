/**
 * Apollo Server as the pipeline's HTTP engine (node:http and Lambda, through graphqlHttp.ts):
 * it reads the request envelope and handles automatic persisted queries, while every policy and
 * the executor come from the pipeline. Its documentStore is the admission's cache of parsed and validated documents,
 * and the admission plugin fills that cache from the request's source before Apollo looks, so
 * Apollo executes only what admission admitted. A refused document is not in the cache:
 * Apollo then parses and validates it with the admission's own options and rules, which
 * answers the refusal in Apollo's usual shape (all validation errors, status 400).
 */
import { ApolloServer } from '@apollo/server';
import type { ApolloServerOptionsWithGateway, ApolloServerPlugin } from '@apollo/server';
import { printSchema } from 'graphql';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import type { GraphQLContext } from '../graphql/context.js';
import type { Transport } from './admission.js';
import { httpCachingPlugin } from './httpCaching.js';
import { cacheHeadersPlugin } from './responseCache/cacheHeaders.js';
import { jsonErrorStatusPlugin } from './jsonErrorStatus.js';
import { newRequestCost, settled } from '../db/capacity.js';
import { ManifestOnlyCache, PersistedDocumentsCache } from './persistedDocuments.js';
import { stringifyResult } from './responseSize.js';
import type { Pipeline } from './pipeline.js';

export interface ApolloOptions {
  transport: Exclude<Transport, 'ws' | 'sse'>;
  persistedOnly: boolean;
  plugins?: ApolloServerPlugin<GraphQLContext>[];
  /** Seconds an anonymous GET of a public persisted document may be cached (CACHE_MAX_AGE); 0: never. */
  cacheMaxAgeSeconds?: number;
}

export function createApollo(
  pipeline: Pipeline,
  { transport, persistedOnly, plugins = [], cacheMaxAgeSeconds = 0 }: ApolloOptions,
) {
  const { admission, reporter, documents } = pipeline;
  const admissionPlugin: ApolloServerPlugin<GraphQLContext> = {
    async requestDidStart() {
      const started = performance.now();
      return {
        async didResolveSource({ source, queryHash }) {
          await admission.document(source, queryHash);
        },
        async didResolveOperation({ document, request }) {
          const verdict = admission.operation(document, { ...request, method: request.http?.method }, transport);
          // Apollo answers one error thrown here, with the status in its extensions.
          const [refusal] = verdict.ok ? [] : verdict.errors;
          if (refusal) throw refusal;
        },
        async willSendResponse({ response, contextValue, operationName }) {
          // contextValue is incomplete when the context factory itself failed (a refused token).
          const context = contextValue as Partial<GraphQLContext> | undefined;
          const cost = context?.cost;
          // A prefetched page can outlive the field that wanted it: the cost waits for it.
          if (cost) await settled(cost);
          let body = response.body.kind === 'single' ? response.body.singleResult : undefined;
          if (response.body.kind === 'single' && body) {
            const role = context?.viewer?.role;
            const finished = reporter.finalize(body, cost, role);
            body = finished.result as typeof body;
            response.body.singleResult = body;
            // Like the cost refusal: the request asked for more than the server hands out.
            if (finished.tooLarge) response.http.status = 400;
          }
          reporter.report({
            transport,
            operationName: operationName ?? null,
            durationMs: Math.round((performance.now() - started) * 100) / 100,
            cost: cost ?? newRequestCost(),
            errors: body?.errors ?? [],
            // Unset when the context could not be built (a refused token answers 401 before).
            log: context?.log,
          });
        },
      };
    },
  };
  // Apollo's gateway interface is its one hook for the executor: the pipeline's, on every transport.
  const gateway: ApolloServerOptionsWithGateway<GraphQLContext>['gateway'] = {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: pipeline.schema, coreSupergraphSdl: printSchema(pipeline.schema) });
      return () => undefined;
    },
    load: async () => ({
      executor: async ({ document, request, operationName, context }) =>
        pipeline.execution.run(
          {
            schema: pipeline.schema,
            document,
            variableValues: request.variables,
            operationName,
            contextValue: context,
          },
          pipeline.explainCache && request.extensions?.cache === true,
        ),
    }),
    stop: async () => undefined,
  };
  return new ApolloServer<GraphQLContext>({
    gateway,
    // The admission's rules decide (NoIntrospection where introspection is
    // off); Apollo's own switch would add a second, differently worded rule.
    introspection: true,
    plugins: [
      ...plugins,
      ApolloServerPluginLandingPageDisabled(),
      admissionPlugin,
      // Cache-Control is decided per document (httpCaching.ts), not per resolved field.
      ApolloServerPluginCacheControlDisabled(),
      httpCachingPlugin({ maxAgeSeconds: cacheMaxAgeSeconds, cache: pipeline.cache }),
      // After httpCaching: the tags and the ETag go only on answers it made public.
      cacheHeadersPlugin(pipeline.cache),
      jsonErrorStatusPlugin(),
    ],
    documentStore: admission.documentStore,
    validationRules: admission.validationRules,
    parseOptions: admission.parseOptions,
    allowBatchedHttpRequests: false,
    // The pipeline's own rule (csrf.ts), run by each transport before Apollo: it also admits a
    // GET of a trusted query, which Apollo's cannot.
    csrfPrevention: false,
    formatError: pipeline.formatError,
    // The JSON of the response-size check, instead of a second serialization of the same answer.
    stringifyResult,
    includeStacktraceInErrorResponses: false,
    persistedQueries: {
      cache: persistedOnly ? new ManifestOnlyCache(documents) : new PersistedDocumentsCache(documents),
    },
    // The process owns SIGINT/SIGTERM (main.ts): it stops the server, then the database.
    stopOnTerminationSignals: false,
  });
}
