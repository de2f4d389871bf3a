/**
 * `npm run consumer`: stream processing on its own, for N API instances on Redis. It reads the
 * table's stream (soldCount, order events), publishes the events to Redis (REDIS_URL), and
 * serves only /healthz and /metrics on CONSUMER_PORT (default 9464; 0 picks a free port, logged).
 *
 * Run two or more for fail-over: they share the checkpoints and leases of one consumer name
 * (STREAM_CONSUMER_NAME, default `processor`), each shard read by the lease holder
 * (src/streams/leases.ts). API instances then run with STREAM_CONSUMER=false.
 * SIGINT/SIGTERM stop cleanly: the batch under way is finished and checkpointed, the leases are
 * released (a successor starts at once) and the connections closed.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../config.js';
import { handleStopSignals } from '../shutdown.js';
import { DatabaseUnreachableError } from '../db/ensureTable.js';
import { LocalDynamoError } from '../db/local.js';
import { openDatabase } from '../db/open.js';
import type { OpenDatabase } from '../db/open.js';
import { InProcessEventBus } from '../events/eventBus.js';
import type { EventBus } from '../events/eventBus.js';
import { RedisInvalidationBus } from '../events/invalidationBus.js';
import { RedisEventBus } from '../events/redisEventBus.js';
import { baselineNewTable } from '../migrations/runner.js';
import { StreamConsumer } from '../streams/consumer.js';
import { createStreamsClient } from '../streams/streamsClient.js';
import { serveMetrics } from '../transports/http/metricsRoute.js';
import { createConsumerMetrics } from './consumerMetrics.js';
import { invalidationPublisher } from './invalidationPublisher.js';

const USER_FACING = [ConfigError, LocalDynamoError, DatabaseUnreachableError];

async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel }).child({ component: 'consumer' });
  const owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  let db: OpenDatabase | undefined;
  let consumer: StreamConsumer | undefined;
  let server: http.Server | undefined;
  let bus: EventBus | undefined;
  let invalidations: RedisInvalidationBus | undefined;
  let streams: ReturnType<typeof createStreamsClient> | undefined;
  const shutdown = handleStopSignals(log, async () => {
    await consumer?.stop();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await bus?.close();
    await invalidations?.close();
    streams?.destroy();
    await db?.close();
  });

  try {
    if (config.redisUrl) {
      const redis = new RedisEventBus({
        url: config.redisUrl,
        tableName: config.tableName,
        log,
        subscribe: false,
        signingSecret: config.events.signingSecret,
      });
      await redis.start();
      bus = redis;
      invalidations = new RedisInvalidationBus({
        url: config.redisUrl,
        tableName: config.tableName,
        log,
        subscribe: false,
      });
      await invalidations.start();
    } else {
      // Still useful (soldCount), but no API instance hears of the events.
      log.warn('REDIS_URL is not set: the consumer keeps soldCount but its order events reach no subscriber');
      bus = new InProcessEventBus();
    }
    const eventBus = bus;
    db = await openDatabase(config, { reuseRunningLocal: true });
    // A table this process created is at the current schema, as one `npm start` creates.
    if (db.tableCreated) await baselineNewTable(db.dynamo.doc, config.tableName);
    streams = createStreamsClient({ endpoint: db.endpoint, region: config.region });
    const metrics = createConsumerMetrics(() => consumer, eventBus);
    const publisher = invalidations && invalidationPublisher(invalidations, owner);
    consumer = new StreamConsumer({
      dynamo: db.dynamo,
      streams,
      tableName: config.tableName,
      consumerName: config.consumerGroup,
      pollIntervalMs: config.streamPollMs,
      leases: { owner, ttlMs: config.leaseTtlMs },
      publish: (event) => eventBus.publish(event),
      onBatch: (batch) => metrics.observe(batch),
      onRecords: publisher?.records,
      log,
    });
    publisher?.watch(consumer);
    const running = consumer;
    // The API's /metrics handler: the same METRICS_TOKEN and loopback rule.
    const serveMetricsHere = serveMetrics(metrics.registry, config.metrics);
    server = http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET') {
        res.writeHead(405, { allow: 'GET' }).end();
      } else if (path === '/healthz') {
        const body = {
          status: running.running ? 'ok' : 'stopped',
          owner,
          leasesHeld: running.leasesHeld ?? 0,
          eventBus: eventBus.health(),
        };
        res.writeHead(running.running ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(body));
      } else if (path === '/metrics') {
        serveMetricsHere(req, res).catch(() => res.writeHead(500).end());
      } else {
        res.writeHead(404).end();
      }
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
      `tablegraph consumer ready, /healthz and /metrics on port ${port}`,
    );
  } catch (error) {
    await shutdown('startup failure').catch(() => undefined);
    throw error;
  }
}

main().catch((error: unknown) => {
  if (USER_FACING.some((type) => error instanceof type))
    console.error(`tablegraph consumer: ${(error as Error).message}`);
  else console.error('tablegraph consumer: failed to start:', error);
  process.exit(1);
});
