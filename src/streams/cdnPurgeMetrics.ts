/** The CDN purge hook's Prometheus metrics (cdnPurge.ts), read from its counters at each scrape. */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { CdnPurger } from './cdnPurge.js';

export function registerCdnPurgeMetrics(registry: Registry, purger: CdnPurger): void {
  const { stats } = purger;
  new Counter({
    name: 'tablegraph_cdn_purge_tags_total',
    help: 'Public tags sent to the CDN purge hook, by outcome: purged, or lost (given up after the retries, or dropped from a full queue; the CDN keeps them until their max-age)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'purged' }, stats.purgedTags);
      this.inc({ outcome: 'lost' }, stats.lostTags);
    },
  });
  new Counter({
    name: 'tablegraph_cdn_purge_posts_total',
    help: 'POSTs to the CDN purge hook, by outcome: ok (2xx), or failed (an attempt that failed; each retry counts)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'ok' }, stats.posts);
      this.inc({ outcome: 'failed' }, stats.failedAttempts);
    },
  });
  new Gauge({
    name: 'tablegraph_cdn_purge_queued_tags',
    help: 'Tags waiting for a POST to the CDN purge hook',
    registers: [registry],
    collect() {
      this.set(purger.queuedTags);
    },
  });
}
