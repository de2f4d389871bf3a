/**
 * The Apollo Server itself, independent of how requests arrive: the Express app (app.ts) and
 * the AWS Lambda handler (src/lambda/graphql.ts) both build it here, so limits, error masking,
 * authentication and cost reporting are the same everywhere.
 */
import { ApolloServer } from '@apollo/server';
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { Logger } from 'pino';
import { createVerifier } from '../auth/tokens.js';
import type { AuthConfig } from '../auth/tokens.js';
import type { QueryLimits } from '../config.js';
import type { RequestCost } from '../db/capacity.js';
import type { DataSources } from '../db/loaders.js';
import { createContext, viewerFrom } from '../graphql/context.js';
import type { GraphQLContext } from '../graphql/context.js';
import { costPlugin } from './costPlugin.js';
import { createFormatError } from './errorMasking.js';
import { ManifestOnlyCache, PersistedDocumentsCache } from './persistedDocuments.js';
import { OrderEvents } from '../graphql/pubsub.js';
import { queryCostPlugin } from './queryCost.js';
import { responseSizePlugin } from './responseSize.js';
import { buildSchema } from './schema.js';

export interface GraphQLServerOptions {
  data: DataSources;
  log: Logger;
  auth: AuthConfig;
  limits: QueryLimits;
  introspection: boolean;
  persistedOnly: boolean;
  /** The persisted-documents manifest (sha256 hex -> document). */
  documents: ReadonlyMap<string, string>;
  plugins?: ApolloServerPlugin<GraphQLContext>[];
  /** Where subscriptions listen; a fresh one when not given (no events then, e.g. on Lambda). */
  events?: OrderEvents;
  /** Who sees capacity units in `extensions.cost` (see costPlugin.ts); default admins only. */
  costDetails?: 'admin' | 'all';
}

export function createGraphQLServer({
  data,
  log,
  auth,
  limits,
  introspection,
  persistedOnly,
  documents,
  plugins = [],
  events = new OrderEvents(),
  costDetails = 'admin',
}: GraphQLServerOptions) {
  const verify = createVerifier(auth);
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, flattenFragments: true },
    maxAliases: { n: limits.maxAliases },
    maxDirectives: { n: limits.maxDirectives },
    // graphql-js enforces this itself while parsing (parseOptions below): a syntax error stays a
    // 400, where armor's plugin would re-parse and turn it into a 500.
    maxTokens: { enabled: false },
    // Our connection-aware cost limit (queryCost.ts) replaces armor's.
    costLimit: { enabled: false },
    // "Did you mean ...?" suggestions reveal the schema; keep them only where introspection is on anyway.
    blockFieldSuggestion: { enabled: !introspection },
  }).protect();
  const schema = buildSchema();
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    introspection,
    plugins: [
      ...plugins,
      ApolloServerPluginLandingPageDisabled(),
      // graphql-armor is typed against Apollo's CommonJS declarations; the plugins are the same objects.
      ...(armor.plugins as unknown as ApolloServerPlugin<GraphQLContext>[]),
      queryCostPlugin(limits.maxCost),
      costPlugin(costDetails),
      // Last: it measures the response as sent, cost extension included.
      responseSizePlugin(limits.maxResponseBytes),
    ],
    validationRules: armor.validationRules,
    parseOptions: { maxTokens: limits.maxTokens },
    allowBatchedHttpRequests: false,
    formatError: createFormatError(log, { hideSuggestions: !introspection }),
    includeStacktraceInErrorResponses: false,
    persistedQueries: {
      cache: persistedOnly ? new ManifestOnlyCache(documents) : new PersistedDocumentsCache(documents),
    },
    // The process owns SIGINT/SIGTERM (main.ts): it stops the server, then the database.
    stopOnTerminationSignals: false,
  });

  /** The context of one request: authenticates the Authorization header (401 when refused). */
  const contextFor = async (authorization: string | undefined, requestId: string, cost: RequestCost) =>
    createContext(data, cost, requestId, log, await viewerFrom(authorization, verify), events);

  /** The same validation rules for operations that arrive over WebSocket (graphql-ws validates on its own). */
  const validationRules = armor.validationRules;
  return { apollo, contextFor, schema, validationRules, events };
}
