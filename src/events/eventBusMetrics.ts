/**
 * The event bus in Prometheus terms, for the API server's and the consumer's /metrics alike:
 * whether it is connected, how many events it lost, and how long delivery took.
 */
import { Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { EventBus } from './eventBus.js';

/** What an API server's fan-out (src/graphql/eventFanOut.ts) reports. */
export interface FanOutCounts {
  /** This process's GraphQL subscriptions listening to the bus. */
  readonly subscriberCount: number;
  /** The topics they listen to whose subscription on the bus is in place. */
  readonly subscribedTopicCount: number;
  /** Repeats of already delivered events dropped. */
  readonly duplicates: number;
}

/** `fanOut`: API servers only. */
export function registerEventBusMetrics(registry: Registry, bus: EventBus, fanOut?: FanOutCounts): void {
  if (fanOut) {
    new Gauge({
      name: 'graphql_subscriptions_active',
      help: 'GraphQL subscriptions to change events open on this instance',
      registers: [registry],
      collect() {
        this.set(fanOut.subscriberCount);
      },
    });
    new Gauge({
      name: 'tablegraph_event_bus_topics',
      help: 'Change-event topics this instance is subscribed to on the bus: those its subscriptions listen to (none receives the others)',
      registers: [registry],
      collect() {
        this.set(fanOut.subscribedTopicCount);
      },
    });
    new Gauge({
      name: 'tablegraph_event_bus_duplicates_dropped',
      help: 'Change events this instance had delivered already (same stream sequence number): not delivered again',
      registers: [registry],
      collect() {
        this.set(fanOut.duplicates);
      },
    });
  }
  new Gauge({
    name: 'tablegraph_event_bus_rejected_events',
    help: 'Messages received on the bus that failed their checks (size, schema, signature): dropped',
    registers: [registry],
    collect() {
      this.set(bus.rejected);
    },
  });
  new Gauge({
    name: 'tablegraph_event_bus_up',
    help: '1 while the change event bus is connected (always 1 in-process), by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      const health = bus.health();
      this.set({ kind: health.kind }, health.status === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'tablegraph_event_bus_lost_events',
    help: 'Change events this process could not publish (the bus was down): never delivered',
    registers: [registry],
    collect() {
      this.set(bus.lost);
    },
  });
  const delivery = new Histogram({
    name: 'tablegraph_event_bus_delivery_seconds',
    help: 'From publish (by whichever process) to receipt by this process, per change event',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  bus.onDelivered = (latencyMs) => delivery.observe(Math.max(0, latencyMs) / 1000);
}
