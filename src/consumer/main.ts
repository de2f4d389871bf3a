/**
 * `npm run consumer`: stream processing on its own, for N API instances on Redis. It reads the
 * table's stream (soldCount, change events), publishes the events to Redis (REDIS_URL), and
 * serves only /healthz, /readyz and /metrics on CONSUMER_PORT (0 picks a free port,
 * logged), with the API's handlers.
 *
 * Run two or more for fail-over: they share the checkpoints and leases of one consumer name
 * (STREAM_CONSUMER_NAME, default `processor`), each shard read by the lease holder
 * (src/streams/leases.ts). API instances then run with STREAM_CONSUMER=false.
 * SIGINT/SIGTERM stop cleanly: the batch under way is finished and checkpointed (waited for at
 * most one renewal period, LEASE_TTL_MS / 3), the leases are released (a successor takes them at
 * its next look) and the connections closed.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { ConfigError, loadConsumerConfig } from '../config/index.js';
import { parseCommandLine } from '../cli.js';
import { runMain } from '../runMain.js';
import { handleStopSignals } from '../shutdown.js';
import { startTelemetry } from '../telemetry/start.js';
import { DatabaseUnreachableError } from '../db/ensureTable.js';
import { LocalDynamoError } from '../db/localChild.js';
import { openDatabase } from '../db/open.js';
import type { OpenDatabase } from '../db/open.js';
import { InProcessEventBus } from '../events/eventBus.js';
import type { EventBus } from '../events/eventBus.js';
import { redisSettingsOf, startRedisMessaging } from '../events/redisFromConfig.js';
import type { RedisMessaging } from '../events/redisFromConfig.js';
import { baselineNewTable } from '../migrations/runner.js';
import { startPublisherBumps } from '../pipeline/responseCache/tagBumps.js';
import type { PublisherBumps } from '../pipeline/responseCache/tagBumps.js';
import { cdnPurgerFrom } from '../streams/cdnPurge.js';
import type { CdnPurger } from '../streams/cdnPurge.js';
import { registerCdnPurgeMetrics } from '../streams/cdnPurgeMetrics.js';
import { StreamConsumer } from '../streams/consumer.js';
import { redisInvalidations } from '../streams/redisInvalidations.js';
import { StreamOutputs } from '../streams/streamOutputs.js';
import { createStreamsClient } from '../streams/streamsClient.js';
import { createDynamo } from '../db/client.js';
import type { Dynamo } from '../db/client.js';
import { leaseRetryStrategy } from '../streams/leases.js';
import { healthRoutes } from '../transports/http/health.js';
import { serveMetrics } from '../transports/http/metricsRoute.js';
import { createConsumerMetrics } from './consumerMetrics.js';

const USER_FACING = [ConfigError, LocalDynamoError, DatabaseUnreachableError];

async function main(): Promise<Logger> {
  const config = loadConsumerConfig();
  const log = pino({ level: config.logLevel }).child({ component: 'consumer' });
  const owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  let db: OpenDatabase | undefined;
  let consumer: StreamConsumer | undefined;
  let server: http.Server | undefined;
  let bus: EventBus | undefined;
  let redis: RedisMessaging | undefined;
  let purger: CdnPurger | undefined;
  let bumps: PublisherBumps | undefined;
  let streams: ReturnType<typeof createStreamsClient> | undefined;
  let leaseDynamo: Dynamo | undefined;
  const telemetry = await startTelemetry(config.telemetry, 'tablegraph-consumer');
  const shutdown = handleStopSignals(log, async () => {
    await consumer?.stop();
    await purger?.close();
    await telemetry?.shutdown();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await bus?.close();
    await redis?.close();
    await bumps?.stop();
    streams?.destroy();
    leaseDynamo?.client.destroy();
    await db?.close();
  });

  try {
    // Its heartbeats are checked against the lease table under its owner name.
    redis = await startRedisMessaging(config, { log, subscribe: false, invalidations: 'publish', from: owner });
    if (redis) bus = redis.events;
    else {
      // Still useful (soldCount), but no API instance hears of the events.
      log.warn('REDIS_URL is not set: the consumer keeps soldCount but its change events reach no subscriber');
      bus = new InProcessEventBus();
    }
    const eventBus = bus;
    db = await openDatabase(config, { reuseRunningLocal: true });
    // A table this process created is at the current schema, as one `npm start` creates.
    if (db.tableCreated) await baselineNewTable(db.dynamo.doc, config.tableName);
    streams = createStreamsClient({ endpoint: db.endpoint, region: config.region });
    // The lease writes on a client of their own, retried on the lease's time scale.
    leaseDynamo = createDynamo({
      endpoint: db.endpoint,
      region: config.region,
      overrides: { retryStrategy: leaseRetryStrategy(config.leaseTtlMs) },
    });
    const invalidations = redis?.invalidations;
    const metrics = createConsumerMetrics(() => consumer, eventBus, invalidations);
    // The consumer purges the CDN: it is the one process that sees every change once.
    purger = cdnPurgerFrom(config, log);
    if (purger) registerCdnPurgeMetrics(metrics.registry, purger);
    // Each batch's tags bumped in the shared cache tier before they go out: the instances need not.
    const bumper = (bumps = await startPublisherBumps({
      redis: redisSettingsOf(config),
      tagTtlMs: config.sharedBumps?.tagTtlMs,
      tableName: config.tableName,
      log,
    }));
    const outputs = new StreamOutputs({
      publish: (event) => eventBus.publish(event),
      invalidations:
        invalidations &&
        redisInvalidations(invalidations, config.consumerGroup, bumper && ((tags) => bumper.bump(tags))),
      purge: purger,
    });
    consumer = new StreamConsumer({
      dynamo: db.dynamo,
      streams,
      tableName: config.tableName,
      consumerName: config.consumerGroup,
      pollIntervalMs: config.streamPollMs,
      leases: { owner, ttlMs: config.leaseTtlMs, dynamo: leaseDynamo },
      publish: outputs.publish,
      onBatch: (batch) => metrics.observe(batch),
      onRecords: (records) => outputs.changed(records),
      log,
    });
    outputs.watch(consumer);
    const running = consumer;
    // The API's route handlers: /healthz and /readyz by the same rules (readiness: DynamoDB answers
    // and the consumer runs), /metrics with the same METRICS_TOKEN and loopback rule.
    const health = healthRoutes(db.dynamo.client, config.tableName, {
      eventBus: () => eventBus.health(),
      details: () => ({ owner, leasesHeld: running.leasesHeld ?? 0 }),
      notReady: () => (running.running ? undefined : 'the stream consumer has stopped'),
    });
    const routes = new Map([
      ['/healthz', health.healthz],
      ['/readyz', health.readyz],
      ['/metrics', serveMetrics(metrics.registry, config.metrics)],
    ]);
    server = http.createServer((req, res) => {
      const route = routes.get((req.url ?? '/').split('?')[0] ?? '/');
      if (!route || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404).end();
        return;
      }
      route(req, res).catch((error: unknown) => {
        log.error({ err: error }, 'unexpected HTTP error');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    const httpServer = server;
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(config.consumerPort, config.host, () => resolve());
    });
    await consumer.start();
    const port = (server.address() as AddressInfo).port;
    log.info(
      { port, owner, consumerName: config.consumerGroup, leaseTtlMs: config.leaseTtlMs, database: db.where },
      `tablegraph consumer ready, /healthz, /readyz and /metrics on port ${port}`,
    );
  } catch (error) {
    await shutdown('startup failure').catch(() => undefined);
    throw error;
  }
  return log;
}

parseCommandLine({
  name: 'consumer',
  run: 'npm run consumer --',
  usage: `

A standalone stream consumer: reads the table's stream (soldCount, change events), publishes the
events to Redis (REDIS_URL) and serves /healthz, /readyz and /metrics on CONSUMER_PORT. Run two
or more for fail-over; API instances then run with STREAM_CONSUMER=false. Takes no flags: every
setting is an environment variable (docs/configuration.md).`,
});
runMain('tablegraph consumer', main, USER_FACING);
