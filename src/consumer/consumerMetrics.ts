/**
 * The standalone consumer's Prometheus metrics (GET /metrics on CONSUMER_PORT): what the stream
 * processing did, the leases it holds, and the event bus and invalidation channels it publishes to.
 */
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { EventBus } from '../events/eventBus.js';
import { countUnhandledRejections } from '../runMain.js';
import { observeRegistry } from '../telemetry/start.js';
import { registerEventBusMetrics } from '../events/eventBusMetrics.js';
import type { RedisInvalidationBus } from '../events/invalidationBus.js';
import { registerRedisMetrics } from '../events/redisMetrics.js';
import type { BatchReport, StreamConsumer } from '../streams/consumer.js';
import { registerStreamMetrics } from '../streams/streamMetrics.js';

export type ConsumerMetrics = ReturnType<typeof createConsumerMetrics>;

export function createConsumerMetrics(
  consumer: () => StreamConsumer | undefined,
  bus: EventBus,
  invalidations?: RedisInvalidationBus,
) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  countUnhandledRejections(registry);
  observeRegistry(registry);
  registerEventBusMetrics(registry, bus);
  registerRedisMetrics(registry, [], invalidations);
  const stream = registerStreamMetrics(registry);
  const lag = new Gauge({
    name: 'dynamodb_stream_lag_seconds',
    help: 'Age of the newest stream record processed, on the shard furthest behind',
    registers: [registry],
  });
  new Gauge({
    name: 'tablegraph_stream_leases_held',
    help: 'Stream shards whose lease this consumer holds',
    registers: [registry],
    collect() {
      this.set(consumer()?.leasesHeld ?? 0);
    },
  });
  const publishDelay = new Histogram({
    name: 'tablegraph_stream_event_publish_seconds',
    help: 'From the stream page that held a change to its event published (processing, soldCount, the publish itself)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    registry,
    observe(batch: BatchReport): void {
      stream.observe({ ...batch, events: batch.events.length });
      lag.set(batch.lagSeconds);
      for (const at of batch.publishedAt) publishDelay.observe(Math.max(0, at - batch.readAt) / 1000);
    },
  };
}
