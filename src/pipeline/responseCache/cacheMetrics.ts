/** The response cache's Prometheus metrics, read from its counters at each scrape. */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { FeedProber } from './feedProber.js';
import type { ResponseCache } from './responseCache.js';

export function registerResponseCacheMetrics(registry: Registry, cache: ResponseCache, prober?: FeedProber): void {
  const { stats } = cache;
  if (prober) {
    new Counter({
      name: 'tablegraph_response_cache_feed_probes_total',
      help: 'Feed probes this instance wrote because its invalidation feed fell silent, by outcome (written, failed)',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ outcome: 'written' }, prober.stats.written);
        this.inc({ outcome: 'failed' }, prober.stats.failed);
      },
    });
  }
  new Counter({
    name: 'tablegraph_response_cache_requests_total',
    help: 'Queries that went through the response cache, by outcome (hit, miss, bypass)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'hit' }, stats.hits);
      this.inc({ outcome: 'miss' }, stats.misses);
      this.inc({ outcome: 'bypass' }, stats.bypasses);
    },
  });
  new Counter({
    name: 'tablegraph_response_cache_evictions_total',
    help: 'Cached answers evicted by invalidations and flushes',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats.evictions);
    },
  });
  new Counter({
    name: 'tablegraph_response_cache_faults_total',
    help: 'What the cache did about faults in its feed: invalidations widened to a kind or to everything (widened), flushes a publisher asked for after losing a message (publisher_loss), bumps of the shared tier that failed (failed_bump), heartbeats the lease table did not confirm (unvouched_heartbeat)',
    labelNames: ['fault'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ fault: 'widened' }, stats.widened);
      this.inc({ fault: 'publisher_loss' }, stats.publisherLosses);
      this.inc({ fault: 'failed_bump' }, stats.failedBumps);
      this.inc({ fault: 'unvouched_heartbeat' }, stats.unvouchedBeats);
    },
  });
  new Gauge({
    name: 'tablegraph_response_cache_bytes',
    help: 'Bytes the cached answers take (RESPONSE_CACHE_MAX_BYTES bounds it)',
    registers: [registry],
    collect() {
      this.set(cache.bytes);
    },
  });
  new Gauge({
    name: 'tablegraph_response_cache_entries',
    help: 'Cached answers',
    registers: [registry],
    collect() {
      this.set(cache.entries);
    },
  });
  new Gauge({
    name: 'tablegraph_response_cache_feed_up',
    help: '1 while the invalidation feed is live (the cache serves), 0 while it bypasses',
    registers: [registry],
    collect() {
      this.set(cache.feed.live ? 1 : 0);
    },
  });
  const { feed } = cache;
  if (feed.partitions > 1) {
    new Gauge({
      name: 'tablegraph_response_cache_feed_partition_up',
      help: '1 while a partition of the invalidation feed (one of its Redis channels) beats, 0 while it keeps the cache bypassing',
      labelNames: ['partition'] as const,
      registers: [registry],
      collect() {
        for (let partition = 0; partition < feed.partitions; partition++)
          this.set({ partition: String(partition) }, feed.partitionLive(partition) ? 1 : 0);
      },
    });
  }
  const { shared } = cache;
  if (shared) {
    new Counter({
      name: 'tablegraph_response_cache_shared_total',
      help: 'Look-ups and stores of the shared tier in Redis, by outcome (hit, miss, invalid, store, refused, error)',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        const s = shared.stats;
        this.inc({ outcome: 'hit' }, s.hits);
        this.inc({ outcome: 'miss' }, s.misses);
        this.inc({ outcome: 'invalid' }, s.invalid);
        this.inc({ outcome: 'store' }, s.stores);
        this.inc({ outcome: 'refused' }, s.refused);
        this.inc({ outcome: 'error' }, s.errors);
      },
    });
  }
  const lag = new Histogram({
    name: 'tablegraph_response_cache_invalidation_lag_seconds',
    help: "From a change (the stream record's ApproximateCreationDateTime) to its eviction on this instance",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  cache.onLag((seconds) => lag.observe(seconds));
}
