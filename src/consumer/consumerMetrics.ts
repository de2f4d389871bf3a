/**
 * The standalone consumer's Prometheus metrics (GET /metrics on CONSUMER_PORT): what the stream
 * processing did, the leases it holds, and the event bus it publishes to.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { EventBus } from '../events/eventBus.js';
import { observeRegistry } from '../telemetry/start.js';
import { registerEventBusMetrics } from '../events/eventBusMetrics.js';
import type { BatchReport, StreamConsumer } from '../streams/consumer.js';

export type ConsumerMetrics = ReturnType<typeof createConsumerMetrics>;

export function createConsumerMetrics(consumer: () => StreamConsumer | undefined, bus: EventBus) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  observeRegistry(registry);
  registerEventBusMetrics(registry, bus);
  const records = new Counter({
    name: 'tablegraph_stream_records_total',
    help: 'Stream records read and processed (every item type)',
    registers: [registry],
  });
  const duplicates = new Counter({
    name: 'tablegraph_stream_duplicate_records_total',
    help: 'Stream records delivered again whose soldCount change was already applied (changed nothing)',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'tablegraph_stream_record_failures_total',
    help: 'Stream records that failed and are retried',
    registers: [registry],
  });
  const events = new Counter({
    name: 'tablegraph_stream_events_published_total',
    help: 'Order events handed to the event bus (lost ones included: see tablegraph_event_bus_lost_events)',
    registers: [registry],
  });
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
  return {
    registry,
    observe(batch: BatchReport): void {
      records.inc(batch.records);
      duplicates.inc(batch.duplicates);
      failures.inc(batch.failures);
      events.inc(batch.events.length);
      lag.set(batch.lagSeconds);
    },
  };
}
