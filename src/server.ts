/**
 * The server `npm start` runs (src/main.ts): the database (embedded DynamoDB Local unless
 * configured otherwise), the table, the demo data on first start, then the runtime
 * (src/runtime.ts) and the HTTP server over it. SIGINT/SIGTERM stop the HTTP server first
 * (in-flight requests finish), then the runtime, then the database child.
 */
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { Logger } from 'pino';
import { signToken } from './auth/tokens.js';
import { ConfigError } from './config/index.js';
import type { Config } from './config/index.js';
import { CursorCodec } from './db/cursor.js';
import { DatabaseUnreachableError } from './db/ensureTable.js';
import { LocalDynamoError } from './db/localChild.js';
import { createLogger } from './logger.js';
import { handleStopSignals } from './shutdown.js';
import { startTelemetry } from './telemetry/start.js';
import { openDatabase } from './db/open.js';
import { SchemaGate } from './db/schemaGate.js';
import { baselineNewTable, migrate } from './migrations/runner.js';
import { watchMigrations } from './migrations/watch.js';
import type { OpenDatabase } from './db/open.js';
import { redisSettingsOf, startRedisMessaging } from './events/redisFromConfig.js';
import type { RedisMessaging } from './events/redisFromConfig.js';
import { cdnPurgerFrom } from './streams/cdnPurge.js';
import type { CdnPurger } from './streams/cdnPurge.js';
import { registerCdnPurgeMetrics } from './streams/cdnPurgeMetrics.js';
import { demoData } from './seed/demoData.js';
import { seedDemoIfNeeded } from './seed/seed.js';
import { createStreamsClient } from './streams/streamsClient.js';
import { playgroundAssets, PlaygroundNotBuiltError } from './transports/http/playground/bundle.js';
import { SharedTier } from './pipeline/responseCache/sharedTier.js';
import { isIndexTag } from './table/dependencies.js';
import { createRuntime } from './runtime.js';
import { inProcessConsumer } from './runtimeConsumer.js';
import type { Runtime } from './runtime.js';
import { assertPortFree, PortInUseError, serveHttp } from './transports/http/server.js';
import type { RunningServer } from './transports/http/server.js';

/** Failures whose message is a complete instruction to the user: printed alone, no stack trace. */
export const USER_FACING = [ConfigError, LocalDynamoError, DatabaseUnreachableError, PortInUseError];

/** Ready-made tokens for the embedded development setup: alice (customer) and an admin. */
async function developmentTokens(config: Config): Promise<{ alice: string; admin: string } | undefined> {
  if (config.mode !== 'embedded' || config.nodeEnv === 'production' || !config.auth.secret) return undefined;
  return {
    alice: await signToken({ userId: 'alice', role: 'customer' }, config.auth),
    admin: await signToken({ userId: 'admin', role: 'admin' }, config.auth),
  };
}

/** What only the benchmark turns off, to measure what it is worth (bench/serverLevers.ts); on in the server. */
export interface Levers {
  /** Read a user with the first page of their orders in one Query (their item collection). */
  itemCollections?: boolean;
}

/** Starts the server with `config` (loadServerConfig's); resolves to its logger once it is ready. */
export async function startServer(config: Config, levers: Levers = {}): Promise<Logger> {
  // Fail in a second, not after starting the database and seeding it.
  await assertPortFree(config.host, config.port);
  // Tokens never reach the logs through a header; the development tokens line is the one
  // deliberate exception (embedded development mode only).
  const log = createLogger(config);
  let db: OpenDatabase | undefined;
  let runtime: Runtime | undefined;
  let server: RunningServer | undefined;
  let streamsClient: DynamoDBStreamsClient | undefined;
  let redis: RedisMessaging | undefined;
  let sharedCache: SharedTier | undefined;
  let purger: CdnPurger | undefined;
  // Before anything makes a span or a registry (nothing is loaded without an OTLP endpoint).
  const telemetry = await startTelemetry(config.telemetry, 'tablegraph-api');
  const shutdown = handleStopSignals(log, async () => {
    // HTTP first (in-flight requests finish, subscriptions close), then what served them.
    await server?.close();
    await runtime?.stop();
    await purger?.close();
    await telemetry?.shutdown();
    await redis?.close();
    await sharedCache?.stop();
    streamsClient?.destroy();
    await db?.close();
  });

  try {
    db = await openDatabase(config, {
      // A dead DynamoDB Local is started again (data survives on disk); requests meanwhile get
      // SERVICE_UNAVAILABLE and /readyz answers 503.
      onLocalEvent: (event) => {
        const fields = { dynamodbLocal: event };
        if (event.kind === 'restarted') log.warn(fields, 'embedded DynamoDB Local restarted');
        else
          log.error(fields, event.kind === 'died' ? 'embedded DynamoDB Local died' : 'DynamoDB Local restart failed');
      },
    });
    if (db.tableCreated) {
      log.info({ table: config.tableName }, 'created table');
      await baselineNewTable(db.dynamo.doc, config.tableName);
    }
    const schema = await prepareSchema(db, config, log);
    if (config.mode !== 'aws' && config.seedDemoData) {
      const written = await seedDemoIfNeeded(db.dynamo.doc, config.tableName);
      if (written > 0) log.info({ items: written }, 'seeded demo data');
    }
    const devTokens = await developmentTokens(config);
    streamsClient = config.streamConsumer
      ? createStreamsClient({ endpoint: db.endpoint, region: config.region })
      : undefined;
    // Only a server that reads the stream itself purges the CDN (else the consumer does).
    if (streamsClient) purger = cdnPurgerFrom(config, log.child({ component: 'cdn-purge' }));
    // An instance whose cache hears of changes over Redis (standalone consumers or the stream Lambda feed it).
    const cacheFedByRedis = config.responseCache !== undefined && !config.streamConsumer;
    redis = await startRedisMessaging(config, {
      log: log.child({ component: 'redis' }),
      subscribe: true,
      invalidations: cacheFedByRedis ? 'listen' : undefined,
    });
    const redisSettings = redisSettingsOf(config);
    if (redisSettings && cacheFedByRedis && config.responseCache?.shared) {
      sharedCache = new SharedTier({
        redis: redisSettings,
        tableName: config.tableName,
        maxAgeMs: config.responseCache.maxAgeSeconds * 1000,
        holdDownMs: config.responseCache.indexHoldMs,
        // The bound of one answer in memory (a tenth of the cache, entryStore.ts).
        maxEntryBytes: Math.floor(config.responseCache.maxBytes / 10),
        isIndexTag,
        log: log.child({ component: 'response-cache' }),
      });
      await sharedCache.start();
    }
    runtime = await createRuntime({
      data: {
        dynamo: db.dynamo,
        tableName: config.tableName,
        cursors: new CursorCodec(config.cursorSecret),
        schema,
        itemCollections: levers.itemCollections ?? true,
      },
      log,
      auth: config.auth,
      limits: config.limits,
      introspection: config.introspection,
      persistedOnly: config.persistedOnly,
      documentsRefreshMs: config.documentsRefreshMs,
      sseReplayEvents: config.sseReplayEvents,
      cacheMaxAgeSeconds: config.cacheMaxAgeSeconds,
      consumer:
        streamsClient &&
        inProcessConsumer({
          client: streamsClient,
          consumerName: config.streamConsumerName,
          pollIntervalMs: config.streamPollMs,
          purge: purger,
        }),
      bus: redis?.events,
      eventDedupeWindow: config.eventDedupeWindow,
      costDetails: config.costDetails,
      responseCache: config.responseCache,
      explainCache: config.nodeEnv !== 'production',
      invalidations: redis?.invalidations,
      sharedCache,
      executor: config.executor,
    });
    if (purger && runtime.metrics) registerCdnPurgeMetrics(runtime.metrics.registry, purger);
    server = await serveHttp(runtime, {
      host: config.host,
      port: config.port,
      http: config.http,
      websocket: config.websocket,
      trustProxyHops: config.trustProxyHops,
      playground: config.playground && {
        defaultHeaders: devTokens ? { Authorization: `Bearer ${devTokens.alice}` } : {},
      },
      cors: { origins: config.corsOrigins, allowLocalhost: config.nodeEnv === 'development' },
      metrics: config.metrics,
      shutdownGraceMs: config.shutdownGraceMs,
      devSignIn: config.devSignIn
        ? { users: demoData().users.map((user) => user.userId), auth: config.auth }
        : undefined,
    });
    log.info(
      { url: server.url, database: db.where, table: config.tableName, eventBus: runtime.events.bus.health().kind },
      `tablegraph ready at ${server.url}`,
    );
    if (devTokens) {
      log.info(
        { alice: `Bearer ${devTokens.alice}`, admin: `Bearer ${devTokens.admin}` },
        'development tokens (valid 12 h; npm run token -- --sub <userId> --role customer|admin makes more)',
      );
    }
    // Development bundles the playground now (once per install, cached) rather than on the first
    // page view; a production install serves npm run build's, and says so if there is none.
    if (config.playground) {
      playgroundAssets().then(
        (dir) => log.debug({ dir }, 'playground assets ready'),
        (error: unknown) =>
          error instanceof PlaygroundNotBuiltError
            ? log.warn(`playground: ${error.message}`)
            : log.error({ err: error }, 'playground build failed'),
      );
    }
  } catch (error) {
    await shutdown('startup failure').catch(() => undefined);
    throw error;
  }
  return log;
}

/**
 * Embedded and endpoint mode migrate the table before serving. In aws mode migrating is the
 * operator's step: the server serves what the table supports and watches for the migration.
 */
async function prepareSchema(db: OpenDatabase, config: Config, log: Logger): Promise<SchemaGate> {
  const { doc, client } = db.dynamo;
  const gate = new SchemaGate();
  if (config.mode !== 'aws') {
    const result = await migrate({
      client,
      doc,
      tableName: config.tableName,
      report: (line, fields) => log.info(fields, line),
    });
    if (result.applied.length > 0) log.info({ applied: result.applied, seconds: result.seconds }, 'migrated table');
    return gate;
  }
  await watchMigrations({ doc, tableName: config.tableName, gate, log, polling: 'timer' }).check();
  return gate;
}
