/**
 * The composition root: everything a process that serves GraphQL builds once, whatever carries
 * the requests. `main.ts`, the tests and the GraphQL Lambda call `createRuntime`; the transports
 * (src/transports/http/server.ts, the Lambda adapter) receive it and only bind sockets or
 * translate events.
 *
 * It builds, in order: the metrics registry (and the DynamoDB client's counters), the trusted
 * documents and their registry poller, the change events, the response cache and its feeds, the
 * pipeline, Apollo Server at the edge of GraphQL over HTTP, and the stream consumer when asked
 * for one. `stop()` ends Apollo, the registry poller, the consumer and the event subscription,
 * in that order; a transport stops before it (in-flight requests finish first).
 */
import type { Logger } from 'pino';
import type { AuthConfig } from './auth/tokens.js';
import { DEFAULT_DOCUMENTS_REFRESH_MS, DEFAULT_LIMITS } from './config/index.js';
import type { ExecutorConfig, QueryLimits, ResponseCacheConfig } from './config/index.js';
import type { DataSources } from './db/loaders.js';
import type { EventBus } from './events/eventBus.js';
import { registerEventBusMetrics } from './events/eventBusMetrics.js';
import { registerRedisMetrics } from './events/redisMetrics.js';
import type { RedisInvalidationBus } from './events/invalidationBus.js';
import { EventFanOut } from './graphql/eventFanOut.js';
import { createApolloEdge } from './pipeline/http/apollo.js';
import type { Execute } from './pipeline/execution/execution.js';
import type { GraphQLHttpRuntime } from './pipeline/http/graphqlHttp.js';
import { createMetrics, instrumentClient } from './pipeline/report/metrics.js';
import type { Metrics } from './pipeline/report/metrics.js';
import { loadPersistedDocuments } from './pipeline/documents/persistedDocuments.js';
import { createPipeline } from './pipeline/pipeline.js';
import type { Pipeline } from './pipeline/pipeline.js';
import type { CostDetails } from './pipeline/report/extensions.js';
import { registerResponseCacheMetrics } from './pipeline/responseCache/cacheMetrics.js';
import { LeaseCheck } from './pipeline/responseCache/leaseCheck.js';
import { startFeedProber } from './pipeline/responseCache/feedProber.js';
import { feedFromRedis } from './pipeline/responseCache/redisFeed.js';
import { createResponseCache, FEED_TIMEOUT_MS } from './pipeline/responseCache/responseCache.js';
import type { ResponseCache } from './pipeline/responseCache/responseCache.js';
import type { SharedTier } from './pipeline/responseCache/sharedTier.js';
import { buildSchema } from './pipeline/schema/schema.js';
import { startRegistryPoller, TrustedDocuments } from './pipeline/documents/trustedDocuments.js';
import type { RegistryPoller } from './pipeline/documents/trustedDocuments.js';
import type { StreamConsumer } from './streams/consumer.js';

/** Builds the stream consumer over the runtime's parts (runtimeConsumer.ts has the in-process one). */
export type ConsumerFactory = (parts: {
  data: DataSources;
  log: Logger;
  events: EventFanOut;
  cache: ResponseCache | undefined;
  metrics: Metrics | undefined;
}) => StreamConsumer;

export interface RuntimeOptions {
  data: DataSources;
  log: Logger;
  auth: AuthConfig;
  /** The label of logs and metrics of requests served through Apollo (default `http`). */
  transport?: GraphQLHttpRuntime['transport'];
  limits?: QueryLimits;
  /** Schema introspection (default true; production turns it off). */
  introspection?: boolean;
  /** Run only trusted documents (the server's manifest and the registry's app manifests). */
  persistedOnly?: boolean;
  /**
   * How often the trusted-documents registry is read again (default: DOCUMENTS_REFRESH_MS's). `timer` polls in
   * the background; `on-request` (Lambda, where no timer runs while a function is frozen) leaves
   * it to the caller, through `documents.freshen()` before each request.
   */
  documentsRefreshMs?: number;
  documentsPolling?: 'timer' | 'on-request';
  /**
   * What a reload of the registry reads: every document's text (`all`, the default), or each
   * manifest's index, with a text read when a request names its document (`index`: the Lambda,
   * whose every cold start would otherwise read the whole registry).
   */
  documentsLoad?: 'all' | 'index';
  /** Keep a Prometheus registry (default true; the Lambda has none). */
  metricsRegistry?: boolean;
  /** Metrics the caller made (the Lambda's, written as EMF lines): used instead of a registry of the runtime's own. */
  useMetrics?: Metrics | undefined;
  /** Recent events held for SSE streams that resume with Last-Event-ID (default: SSE_REPLAY_EVENTS's). */
  sseReplayEvents?: number | undefined;
  /**
   * Run a stream consumer (`inProcessConsumer` of runtimeConsumer.ts): it keeps soldCount up to
   * date and feeds this process's subscriptions and response cache with every change of the
   * table, whoever made it. It starts last and stops after Apollo.
   */
  consumer?: ConsumerFactory | undefined;
  /**
   * Where change events travel (default: in-process). With a Redis bus, subscribers here receive
   * the events that any consumer, Lambda or instance publishes. The caller closes it.
   */
  bus?: EventBus | undefined;
  /** How many recent events' `seq` this instance remembers to deliver each change once (default EVENT_DEDUPE_WINDOW, a constant). */
  eventDedupeWindow?: number | undefined;
  /** Seconds an anonymous GET of a public persisted document may be cached (unset: never). */
  cacheMaxAgeSeconds?: number;
  /** Who sees capacity units in `extensions.cost` (default admins only; see pipeline/report/extensions.ts). */
  costDetails?: CostDetails;
  /** The response cache (docs/caching.md); off when unset. It serves only while `streams` feeds it. */
  responseCache?: ResponseCacheConfig | undefined;
  /** Answer `extensions.cache` to requests that ask (development). */
  explainCache?: boolean;
  /** What executes operations (the loaded configuration's `executor`); the pipeline's default when unset. */
  executor?: ExecutorConfig | undefined;
  /** An executor brought by the caller for every operation (a test's: test/support/). */
  execute?: Execute | undefined;
  /**
   * Where the response cache hears of changes made elsewhere (REDIS_URL, without an in-process
   * stream consumer). The caller closes it.
   */
  invalidations?: RedisInvalidationBus | undefined;
  /** The response cache's tier in Redis, shared by the instances (RESPONSE_CACHE_SHARED). The caller stops it. */
  sharedCache?: SharedTier | undefined;
}

export interface Runtime extends GraphQLHttpRuntime {
  data: DataSources;
  log: Logger;
  /** Where durations and errors are counted; undefined when `metricsRegistry: false`. */
  metrics: Metrics | undefined;
  pipeline: Pipeline;
  /** Publish change events here (the stream consumer does) to reach this process's subscribers. */
  events: EventFanOut;
  consumer: StreamConsumer | undefined;
  /** The response cache, when on. */
  cache: ResponseCache | undefined;
  /** The trusted-documents registry poller (`refresh()` reloads now, `freshen()` when due). */
  documents: RegistryPoller;
  /** Stops Apollo, the registry poller, the stream consumer and the event subscription. Idempotent. */
  stop(): Promise<void>;
}

/** Builds and starts the runtime; a failure on the way stops what had started, then rejects. */
export async function createRuntime({
  data,
  log,
  auth,
  transport = 'http',
  limits = DEFAULT_LIMITS,
  introspection = true,
  persistedOnly = false,
  documentsRefreshMs = DEFAULT_DOCUMENTS_REFRESH_MS,
  documentsPolling = 'timer',
  documentsLoad = 'all',
  metricsRegistry = true,
  useMetrics,
  sseReplayEvents,
  consumer: consumerFactory,
  bus,
  eventDedupeWindow,
  cacheMaxAgeSeconds = 0,
  costDetails = 'admin',
  responseCache,
  explainCache = false,
  invalidations,
  sharedCache,
  executor,
  execute,
}: RuntimeOptions): Promise<Runtime> {
  const metrics = useMetrics ?? (metricsRegistry ? createMetrics() : undefined);
  if (metrics) instrumentClient(data.dynamo.client, metrics);
  const trusted = new TrustedDocuments(loadPersistedDocuments());
  const documents = startRegistryPoller({
    doc: data.dynamo.doc,
    tableName: data.tableName,
    documents: trusted,
    intervalMs: documentsRefreshMs,
    load: documentsLoad,
    log: log.child({ component: 'documents' }),
  });
  const events = new EventFanOut(bus, sseReplayEvents, eventDedupeWindow);
  if (metrics) registerEventBusMetrics(metrics.registry, events.bus, events);
  const cache = responseCache
    ? createResponseCache({
        schema: buildSchema(),
        maxBytes: responseCache.maxBytes,
        maxAgeMs: responseCache.maxAgeSeconds * 1000,
        holdDownMs: responseCache.indexHoldMs,
        feedTimeoutMs: FEED_TIMEOUT_MS,
        // Fed over Redis, each invalidation channel must beat (redisFeed.ts).
        feedPartitions: invalidations?.names.length,
        maxAnswerBytes: limits.maxResponseBytes,
        shared: sharedCache,
      })
    : undefined;
  // An instance fed over Redis probes a silent feed through the stream, whoever reads it (feedProber.ts).
  const prober =
    cache && invalidations
      ? startFeedProber({
          doc: data.dynamo.doc,
          tableName: data.tableName,
          feed: cache.feed,
          writer: invalidations.from,
          log: log.child({ component: 'response-cache' }),
        })
      : undefined;
  if (cache && metrics) registerResponseCacheMetrics(metrics.registry, cache, prober);
  if (metrics && (events.bus.refusals || invalidations || sharedCache)) {
    registerRedisMetrics(
      metrics.registry,
      [
        ...(events.bus.refusals ? [{ source: 'change-events' as const, refusals: events.bus.refusals }] : []),
        ...(invalidations ? [{ source: 'invalidations' as const, refusals: invalidations.refusals }] : []),
        ...(sharedCache ? [{ source: 'shared-tier' as const, refusals: sharedCache.refusals }] : []),
      ],
      invalidations,
    );
  }
  if (cache && invalidations) {
    const leases = new LeaseCheck({ doc: data.dynamo.doc, tableName: data.tableName });
    feedFromRedis(cache, invalidations, leases, log.child({ component: 'response-cache' }));
  }
  const pipeline = createPipeline({
    cache,
    explainCache,
    data,
    log,
    auth,
    limits,
    introspection,
    persistedOnly,
    documents: trusted,
    events,
    metrics,
    costDetails,
    cacheMaxAgeSeconds,
    execute,
    ...(executor ? { executor } : {}),
  });
  const apollo = createApolloEdge(pipeline);
  const consumer = consumerFactory?.({ data, log, events, cache, metrics });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await apollo.stop();
      prober?.stop();
      await documents.stop();
      await consumer?.stop();
      events.detach();
    })());
  try {
    await apollo.start();
    // The registry's documents are trusted from the first request on.
    if (documentsPolling === 'timer') await documents.start();
    else await documents.refresh();
    await consumer?.start();
  } catch (error) {
    await stop().catch((stopError: unknown) => log.error({ err: stopError }, 'runtime stop after a failed start'));
    throw error;
  }
  return { transport, data, log, metrics, pipeline, apollo, events, consumer, cache, documents, stop };
}
