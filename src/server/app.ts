/**
 * The HTTP server: Express 5 carrying Apollo Server at /graphql (further routes such as
 * /healthz join it here; startStandaloneServer could not mount them).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import type { Logger } from 'pino';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { createVerifier } from '../auth/tokens.js';
import type { AuthConfig } from '../auth/tokens.js';
import { DEFAULT_LIMITS } from '../config.js';
import type { QueryLimits } from '../config.js';
import { currentCost, newRequestCost, runWithCost } from '../db/capacity.js';
import type { DataSources } from '../db/loaders.js';
import { createContext, viewerFrom } from './context.js';
import type { GraphQLContext } from './context.js';
import { costPlugin } from './costPlugin.js';
import { createFormatError } from './errorMasking.js';
import { healthRouter } from './health.js';
import { createMetrics, instrumentClient, metricsPlugin } from './metrics.js';
import type { Metrics } from './metrics.js';
import {
  loadPersistedDocuments,
  ManifestOnlyCache,
  PersistedDocumentsCache,
  persistedOnlyGuard,
} from './persistedDocuments.js';
import { queryCostPlugin } from './queryCost.js';
import { playgroundRouter } from './playground/router.js';
import { buildSchema } from './schema.js';

export interface AppOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  data: DataSources;
  log: Logger;
  auth: AuthConfig;
  limits?: QueryLimits;
  /** Schema introspection (default true; production turns it off). */
  introspection?: boolean;
  /** Serve GraphiQL to browsers at GET /graphql (default true); `defaultHeaders` pre-fills its headers editor. */
  playground?: boolean | { defaultHeaders: Record<string, string> };
  /** Run only the documents of the persisted-documents manifest. */
  persistedOnly?: boolean;
  /** How long a shutdown waits for in-flight requests before closing their connections. */
  shutdownGraceMs?: number;
}

export interface RunningApp {
  /** e.g. http://127.0.0.1:4000/graphql */
  url: string;
  port: number;
  /** Stops accepting connections, lets in-flight requests finish, then resolves. */
  stop(): Promise<void>;
  metrics: Metrics;
}

/** Thrown when the port is taken; main prints its message as the one line a user sees. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

const portInUse = (port: number) =>
  new PortInUseError(`Port ${port} is already in use: stop what holds it or set PORT to another port`);

/** Binds and releases `port` to check that start-up will be able to listen on it. */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? portInUse(port) : error),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

const requestIdOf = (header: string | string[] | undefined): string =>
  typeof header === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(header) ? header : randomUUID();

export async function startApp({
  host,
  port,
  data,
  log,
  auth,
  limits = DEFAULT_LIMITS,
  introspection = true,
  playground = true,
  persistedOnly = false,
  shutdownGraceMs = 10_000,
}: AppOptions): Promise<RunningApp> {
  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);
  const verify = createVerifier(auth);
  const documents = loadPersistedDocuments();
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
  const metrics = createMetrics();
  instrumentClient(data.dynamo.client, metrics);
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    introspection,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: shutdownGraceMs }),
      ApolloServerPluginLandingPageDisabled(),
      // graphql-armor is typed against Apollo's CommonJS declarations; the plugins are the same objects.
      ...(armor.plugins as unknown as ApolloServerPlugin<GraphQLContext>[]),
      queryCostPlugin(limits.maxCost),
      costPlugin(),
      metricsPlugin(metrics),
    ],
    validationRules: armor.validationRules,
    parseOptions: { maxTokens: limits.maxTokens },
    allowBatchedHttpRequests: false,
    formatError: createFormatError(log),
    includeStacktraceInErrorResponses: false,
    persistedQueries: {
      cache: persistedOnly ? new ManifestOnlyCache(documents) : new PersistedDocumentsCache(documents),
    },
    // main.ts owns SIGINT/SIGTERM: it stops the server, then the database, in that order.
    stopOnTerminationSignals: false,
  });
  await apollo.start();

  app.use(healthRouter(data.dynamo.client, data.tableName));
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  if (playground) {
    const defaultHeaders = typeof playground === 'object' ? playground.defaultHeaders : {};
    app.use(playgroundRouter({ endpoint: '/graphql', log, defaultHeaders }));
  }
  app.use(
    '/graphql',
    express.json({ limit: limits.maxBodyBytes }),
    ...(persistedOnly ? [persistedOnlyGuard(documents)] : []),
    (req, res, next) => {
      // One id per request, taken from x-request-id when the caller (or a proxy) sent a sane one.
      res.locals.requestId = requestIdOf(req.headers['x-request-id']);
      res.set('x-request-id', res.locals.requestId as string);
      // Everything below runs inside this request's cost record (see db/capacity.ts).
      runWithCost(newRequestCost(), next);
    },
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        const viewer = await viewerFrom(req.headers.authorization, verify);
        return createContext(data, currentCost() ?? newRequestCost(), res.locals.requestId as string, log, viewer);
      },
    }),
  );

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? portInUse(port) : error);
    };
    httpServer.once('error', onError);
    httpServer.listen(port, host, () => {
      httpServer.off('error', onError);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await apollo.stop();
    throw error;
  });

  const actualPort = (httpServer.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    url: `http://${shownHost}:${actualPort}/graphql`,
    port: actualPort,
    stop: () => apollo.stop(),
    metrics,
  };
}
