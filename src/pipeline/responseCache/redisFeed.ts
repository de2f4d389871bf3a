/**
 * The invalidation feed of an API instance on Redis (N instances fed by `npm run consumer` or
 * the stream Lambda): tags from the channel are evicted here (a tag the bus could not take as
 * it was widens to its kind, or to everything). A heartbeat keeps the feed live when it proves
 * something: the echo of a feed probe written less than the feed timeout ago (feedProber.ts;
 * the feed is then live as of the probe's write, whoever wrote it: the writers' clocks must
 * agree, as the leases' do), or lease tenures the lease table confirms (leaseCheck.ts). A
 * closed subscription, or a message that could not be decoded, makes it dead at once
 * (messages may be lost until it is back, and the first heartbeat after that flushes). This
 * instance's mutations reach the others here too.
 */
import type { Logger } from 'pino';
import type { RedisInvalidationBus } from '../../events/invalidationBus.js';
import { sortTags } from '../../events/invalidationMessages.js';
import { RefusalCounter } from '../../events/signedEnvelope.js';
import { traceInvalidation } from '../../telemetry/busSpans.js';
import type { LeaseCheck } from './leaseCheck.js';
import type { ResponseCache } from './responseCache.js';

export function feedFromRedis(
  cache: ResponseCache,
  bus: RedisInvalidationBus,
  leases: LeaseCheck,
  log: Pick<Logger, 'warn'>,
): () => void {
  const unvouched = new RefusalCounter('heartbeats the lease table does not confirm', log);
  const widened = new RefusalCounter('invalidations widened to a kind of tags or to everything', log);
  // Counts the feed's deaths: a heartbeat whose check outlasted one does not revive the feed.
  let deaths = 0;
  const down = () => {
    deaths++;
    cache.feed.down();
  };
  const unsubscribe = bus.subscribe((event) => {
    switch (event.kind) {
      case 'heartbeat': {
        if (event.probe !== undefined) {
          const age = Date.now() - event.probe;
          // A probe dated far ahead of this clock proves nothing either.
          if (age <= cache.feed.timeoutMs && age >= -cache.feed.timeoutMs) {
            cache.feed.beat(age);
            return;
          }
        }
        const at = deaths;
        void leases.vouches(event.from, event.group, event.tenures).then((vouched) => {
          if (!vouched) {
            cache.stats.unvouchedBeats++;
            unvouched.count('not a current lease', { from: event.from, group: event.group });
          } else if (at === deaths) cache.feed.beat();
        });
        return;
      }
      case 'gap':
        down();
        return;
      case 'tags': {
        const { tags, changedAt, traceparents } = event;
        if (event.everything || event.kinds.length > 0)
          widened.count(event.everything ? 'everything' : 'kind', { kinds: event.kinds });
        traceInvalidation(
          traceparents,
          tags.length,
          () => cache.invalidate(tags, changedAt) + cache.invalidateWide(event),
          bus.channel,
        );
      }
    }
  });
  bus.onDown(down);
  cache.onWrite((tags) => void bus.publishTags(sortTags(tags)));
  return unsubscribe;
}
