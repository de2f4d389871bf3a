/**
 * What a process refused or lost on Redis, in Prometheus terms, for the API server's and the
 * consumer's /metrics alike: every message and cache entry read there and not acted on, by
 * source and reason (signedEnvelope.ts's reasons, `invalid` and `undecodable` for bodies), and the
 * invalidation messages that could not be published.
 */
import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import type { RedisInvalidationBus } from './invalidationBus.js';
import type { RefusalCounter } from './signedEnvelope.js';

/** A part of the process that reads from Redis: the change events, the invalidations, the shared cache tier. */
export interface RefusalSource {
  source: 'change-events' | 'invalidations' | 'shared-tier';
  refusals: RefusalCounter;
}

export function registerRedisMetrics(
  registry: Registry,
  sources: readonly RefusalSource[],
  invalidations?: RedisInvalidationBus,
): void {
  new Counter({
    name: 'tablegraph_redis_refused_total',
    help: 'Messages and cache entries read from Redis and refused (unsigned, forged, replayed, stale, malformed, ...), by source and reason',
    labelNames: ['source', 'reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { source, refusals } of sources) {
        for (const [reason, count] of refusals.byReason) this.inc({ source, reason }, count);
      }
    },
  });
  if (!invalidations) return;
  new Counter({
    name: 'tablegraph_invalidations_published_total',
    help: 'Invalidation messages this process could not publish (outcome lost: Redis down or failing), those a batch was split into beyond the first (outcome split), and those that told every instance of a loss before them (outcome loss-told: each makes them flush)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'lost' }, invalidations.lost);
      this.inc({ outcome: 'split' }, invalidations.splits);
      this.inc({ outcome: 'loss-told' }, invalidations.lossesTold);
    },
  });
}
