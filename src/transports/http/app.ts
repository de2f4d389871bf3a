/**
 * The HTTP server: Express 5 carrying Apollo Server at /graphql (further routes such as
 * /healthz join it here; startStandaloneServer could not mount them).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import compression from 'compression';
import express from 'express';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { Logger } from 'pino';
import type { AuthConfig } from '../../auth/tokens.js';
import { DEFAULT_LIMITS, DEFAULT_SOCKET_LIMITS } from '../../config.js';
import type { QueryLimits, ResponseCacheConfig, SocketLimits } from '../../config.js';
import type { DataSources } from '../../db/loaders.js';
import type { EventBus } from '../../events/eventBus.js';
import { registerEventBusMetrics } from '../../events/eventBusMetrics.js';
import { OrderEvents } from '../../graphql/pubsub.js';
import { createApollo } from '../../pipeline/apollo.js';
import { createMetrics, instrumentClient } from '../../pipeline/metrics.js';
import { httpTraceOf, traceHttpRequest } from '../../telemetry/http.js';
import type { Metrics } from '../../pipeline/metrics.js';
import { loadPersistedDocuments } from '../../pipeline/persistedDocuments.js';
import { startRegistryPoller, TrustedDocuments } from '../../pipeline/trustedDocuments.js';
import type { RegistryPoller } from '../../pipeline/trustedDocuments.js';
import { createPipeline } from '../../pipeline/pipeline.js';
import { NO_STORE } from '../../pipeline/httpCaching.js';
import type { RedisInvalidationBus } from '../../events/invalidationBus.js';
import { registerResponseCacheMetrics } from '../../pipeline/responseCache/cacheMetrics.js';
import { feedFromRedis } from '../../pipeline/responseCache/redisFeed.js';
import { createResponseCache, FEED_TIMEOUT_MS } from '../../pipeline/responseCache/responseCache.js';
import type { ResponseCache } from '../../pipeline/responseCache/responseCache.js';
import { buildSchema } from '../../pipeline/schema.js';
import { changedTagsOf } from '../../streams/changedTags.js';
import { corsMiddleware, upgradeAllowed } from './cors.js';
import type { CorsOptions } from './cors.js';
import { etagForPublicAnswers } from './etag.js';
import { metricsRouter, startMetricsServer } from './metricsRoute.js';
import type { MetricsAccess } from './metricsRoute.js';
import { StreamConsumer } from '../../streams/consumer.js';
import { createSseHandler, SSE_PATH } from '../sse/stream.js';
import { serveSubscriptions } from '../ws/subscriptions.js';
import { healthRouter } from './health.js';
import { persistedOnlyGuard } from './persistedOnlyGuard.js';
import { csrfGuard, documentReference } from './trustedRequests.js';
import { playgroundRouter } from './playground/router.js';

export interface AppOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  data: DataSources;
  log: Logger;
  auth: AuthConfig;
  limits?: QueryLimits;
  /** Bounds of the WebSocket transport (sockets, operations per socket, idle time, pings). */
  sockets?: SocketLimits;
  /** Schema introspection (default true; production turns it off). */
  introspection?: boolean;
  /** Serve GraphiQL to browsers at GET /graphql (default true); `defaultHeaders` pre-fills its headers editor. */
  playground?: boolean | { defaultHeaders: Record<string, string> };
  /** Run only trusted documents (the server's manifest and the registry's app manifests). */
  persistedOnly?: boolean;
  /** How often the trusted-documents registry is polled for new manifests (default 5000 ms). */
  documentsRefreshMs?: number;
  /** Recent events held for SSE streams that resume with Last-Event-ID (default 1000). */
  sseReplayEvents?: number;
  /** How long a shutdown waits for in-flight requests before closing their connections. */
  shutdownGraceMs?: number;
  /**
   * Run the in-process stream consumer: it keeps soldCount up to date and feeds this server's
   * subscriptions with every change of the table, whoever made it. `consumerName` names its
   * checkpoints: one name per server instance.
   */
  streams?: { client: DynamoDBStreamsClient; consumerName: string; pollIntervalMs?: number };
  /**
   * Where order events travel (default: in-process). With a Redis bus, subscribers here receive
   * the events that any consumer, Lambda or instance publishes. The caller closes it.
   */
  bus?: EventBus;
  /** How many recent events' `seq` this instance remembers to deliver each change once (EVENT_DEDUPE_WINDOW). */
  eventDedupeWindow?: number;
  /** Browser origins allowed to call /graphql (CORS) and to open its WebSocket; default none. */
  cors?: CorsOptions;
  /** Seconds an anonymous GET of a public persisted document may be cached (default 0: never). */
  cacheMaxAgeSeconds?: number;
  /** Who may read /metrics, and on which port (default: this server's). */
  metrics?: MetricsAccess & { port?: number | undefined };
  /** Who sees capacity units in `extensions.cost` (default admins only; see pipeline/report.ts). */
  costDetails?: 'admin' | 'all';
  /** Socket limits (defaults: DEFAULT_HTTP_LIMITS). */
  http?: Partial<HttpLimits>;
  /** The response cache (docs/caching.md); off when unset. It serves only while `streams` feeds it. */
  responseCache?: ResponseCacheConfig | undefined;
  /** Answer `extensions.cache` to requests that ask (development). */
  explainCache?: boolean;
  /**
   * Where the response cache hears of changes made elsewhere (REDIS_URL, without an in-process
   * stream consumer). The caller closes it.
   */
  invalidations?: RedisInvalidationBus | undefined;
}

/** Bounds on what one slow or idle client can hold (README "Security"). */
export interface HttpLimits {
  /** A request (headers and body) must arrive within this time, else 408 and the socket closes. */
  requestTimeoutMs: number;
  /** The headers must arrive within this time. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection closes after this time. */
  keepAliveTimeoutMs: number;
  /** Open connections (HTTP and WebSocket) at most; further ones are closed at once. */
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
};

export interface RunningApp {
  /** e.g. http://127.0.0.1:4000/graphql */
  url: string;
  port: number;
  /** Stops accepting connections, lets in-flight requests finish, then resolves. */
  stop(): Promise<void>;
  metrics: Metrics;
  /** The port of the separate /metrics server, when METRICS_PORT asked for one. */
  metricsPort: number | undefined;
  /** Publish order events here (the stream consumer does) to reach this server's subscribers. */
  events: OrderEvents;
  consumer: StreamConsumer | undefined;
  /** The response cache, when on. */
  cache: ResponseCache | undefined;
  /** The trusted-documents registry poller (`refresh()` reloads now). */
  documents: RegistryPoller;
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
  sockets = DEFAULT_SOCKET_LIMITS,
  introspection = true,
  playground = true,
  persistedOnly = false,
  documentsRefreshMs = 5_000,
  sseReplayEvents,
  shutdownGraceMs = 10_000,
  streams,
  bus,
  eventDedupeWindow,
  cors = { origins: [], allowLocalhost: false },
  cacheMaxAgeSeconds = 0,
  metrics: metricsAccess = {},
  http: httpLimits = {},
  costDetails = 'admin',
  responseCache,
  explainCache = false,
  invalidations,
}: AppOptions): Promise<RunningApp> {
  const app = express();
  app.disable('x-powered-by');
  // ETags only on public answers (etag.ts), not Express's on every response.
  app.disable('etag');
  const socketLimits = { ...DEFAULT_HTTP_LIMITS, ...httpLimits };
  const httpServer = http.createServer(
    {
      requestTimeout: socketLimits.requestTimeoutMs,
      headersTimeout: socketLimits.headersTimeoutMs,
      keepAliveTimeout: socketLimits.keepAliveTimeoutMs,
      // How often Node looks for requests past those timeouts (its default, 30 s, would let a
      // stalled client hold its socket for up to a minute).
      connectionsCheckingInterval: Math.min(1000, socketLimits.headersTimeoutMs),
    },
    app,
  );
  httpServer.maxConnections = socketLimits.maxConnections;
  const metrics = createMetrics();
  instrumentClient(data.dynamo.client, metrics);
  const documents = new TrustedDocuments(loadPersistedDocuments());
  const registry = startRegistryPoller({
    doc: data.dynamo.doc,
    tableName: data.tableName,
    documents,
    intervalMs: documentsRefreshMs,
    log: log.child({ component: 'documents' }),
  });
  const events = new OrderEvents(bus, sseReplayEvents, eventDedupeWindow);
  registerEventBusMetrics(metrics.registry, events.bus, events);
  const cache = responseCache
    ? createResponseCache({
        schema: buildSchema(),
        maxBytes: responseCache.maxBytes,
        maxAgeMs: responseCache.maxAgeSeconds * 1000,
        holdDownMs: responseCache.indexHoldMs,
        feedTimeoutMs: FEED_TIMEOUT_MS,
        maxAnswerBytes: limits.maxResponseBytes,
      })
    : undefined;
  if (cache) registerResponseCacheMetrics(metrics.registry, cache);
  if (cache && invalidations) feedFromRedis(cache, invalidations);
  const pipeline = createPipeline({
    cache,
    explainCache,
    data,
    log,
    auth,
    limits,
    introspection,
    persistedOnly,
    documents,
    events,
    metrics,
    costDetails,
  });
  const apollo = createApollo(pipeline, {
    transport: 'http',
    persistedOnly,
    cacheMaxAgeSeconds,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: shutdownGraceMs }),
      // Subscriptions end before the HTTP server drains: their sockets would hold it open.
      {
        serverWillStart: async () => ({
          drainServer: async () => {
            sse.dispose();
            await subscriptions.dispose();
          },
        }),
      },
    ],
  });
  const subscriptions = serveSubscriptions({
    httpServer,
    pipeline,
    sockets,
    verifyUpgrade: (req) => upgradeAllowed(req, cors),
  });
  const sse = createSseHandler({ pipeline, sockets });
  await apollo.start();
  // The registry's documents are trusted from the first request on.
  await registry.start();

  // Before compression, which would hold events back until a buffer fills.
  app.use(SSE_PATH, corsMiddleware(cors), sse.handler);
  // gzip or br (the client's choice) for answers over 1 kB: an introspection answer of 60 kB
  // travels as 8 kB.
  // The HTTP server span, first, so that it covers the whole request (nothing while tracing is off).
  app.use('/graphql', (req, res, next) => {
    traceHttpRequest(req, res, '/graphql');
    next();
  });
  app.use(compression({ threshold: 1024 }));
  app.use('/graphql', corsMiddleware(cors));

  app.use(healthRouter(data.dynamo.client, data.tableName, () => events.bus.health()));
  if (metricsAccess.port === undefined) app.use(metricsRouter(metrics, metricsAccess));
  if (playground) {
    const defaultHeaders = typeof playground === 'object' ? playground.defaultHeaders : {};
    app.use(playgroundRouter({ endpoint: '/graphql', log, defaultHeaders }));
  }
  app.use(
    '/graphql',
    (_req, res, next) => {
      // Refusals before Apollo (body parser, persisted-only guard, CSRF prevention) are not
      // stored either; Apollo's answers carry the pipeline's Cache-Control (httpCaching.ts).
      res.setHeader('cache-control', NO_STORE);
      next();
    },
    etagForPublicAnswers(),
    express.json({ limit: limits.maxBodyBytes }),
    documentReference(pipeline),
    csrfGuard(pipeline),
    ...(persistedOnly ? [persistedOnlyGuard(pipeline)] : []),
    (req, res, next) => {
      // One id per request, taken from x-request-id when the caller (or a proxy) sent a sane one.
      res.locals.requestId = requestIdOf(req.headers['x-request-id']);
      res.set('x-request-id', res.locals.requestId as string);
      next();
    },
    expressMiddleware(apollo, {
      context: async ({ req, res }) =>
        pipeline.execution.context(
          await pipeline.execution.viewer(req.headers.authorization),
          res.locals.requestId as string,
          httpTraceOf(req),
        ),
    }),
  );

  // Body-parser failures (oversized or malformed JSON) answer in GraphQL's shape, never as an
  // HTML page with a stack trace.
  app.use(
    (
      error: { status?: number; type?: string },
      _req: express.Request,
      res: express.Response,
      next: express.NextFunction,
    ) => {
      if (res.headersSent) return next(error);
      const status = typeof error.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 500;
      if (status === 500) log.error({ err: error }, 'unexpected HTTP error');
      const [code, message] =
        status === 413
          ? ['PAYLOAD_TOO_LARGE', `The request body exceeds the limit of ${limits.maxBodyBytes} bytes`]
          : status === 500
            ? ['INTERNAL_SERVER_ERROR', 'Internal server error']
            : ['BAD_REQUEST', 'The request body is not valid JSON'];
      res.status(status).json({ errors: [{ message, extensions: { code } }] });
    },
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
    await registry.stop();
    events.detach();
    throw error;
  });

  const metricsServer =
    metricsAccess.port === undefined
      ? undefined
      : await startMetricsServer(metrics, metricsAccess, host, metricsAccess.port).catch(async (error: unknown) => {
          await apollo.stop();
          throw error;
        });

  const consumer = streams
    ? new StreamConsumer({
        dynamo: data.dynamo,
        streams: streams.client,
        tableName: data.tableName,
        consumerName: streams.consumerName,
        pollIntervalMs: streams.pollIntervalMs,
        publish: (event) => events.publish(event),
        onBatch: (batch) => metrics.streamLag.set(batch.lagSeconds),
        onRecords:
          cache &&
          ((records) => {
            const { tags, changedAtMs } = changedTagsOf(records);
            if (tags.length > 0) cache.invalidate(tags, changedAtMs);
          }),
        log: log.child({ component: 'streams' }),
      })
    : undefined;
  if (consumer && cache) {
    // Proof that changes reach this instance: a batch read, or a round that found every shard drained.
    consumer.on('batch', () => cache.feed.beat());
    consumer.on('round', (round) => round.caughtUp && cache.feed.beat());
  }
  try {
    await consumer?.start();
  } catch (error) {
    await apollo.stop();
    await registry.stop();
    events.detach();
    metricsServer?.close();
    throw error;
  }

  const actualPort = (httpServer.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    url: `http://${shownHost}:${actualPort}/graphql`,
    port: actualPort,
    // HTTP first (in-flight requests finish, subscriptions close), then the stream consumer.
    stop: async () => {
      await apollo.stop();
      await registry.stop();
      await consumer?.stop();
      events.detach();
      if (metricsServer) {
        metricsServer.closeAllConnections();
        await new Promise((resolve) => metricsServer.close(resolve));
      }
    },
    metrics,
    metricsPort: metricsServer ? (metricsServer.address() as AddressInfo).port : undefined,
    events,
    consumer,
    cache,
    documents: registry,
  };
}
