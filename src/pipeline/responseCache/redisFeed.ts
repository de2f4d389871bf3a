/**
 * The invalidation feed of an API instance on Redis (N instances fed by `npm run consumer` or
 * the stream Lambda): tags from the channels are evicted here (a tag the bus could not take as
 * it was widens to its kind, or to everything). A heartbeat keeps the feed live when it proves
 * something: the echo of a feed probe written less than the feed timeout ago (feedProber.ts;
 * the feed is then live as of the probe's write, whoever wrote it: the writers' clocks must
 * agree, as the leases' do), or lease tenures the lease table confirms (leaseCheck.ts). A
 * closed subscription, a message that could not be decoded or a publisher's number skipped
 * makes it dead at once (messages may be lost until it is back, and the first heartbeat after
 * that flushes). This instance's mutations reach the others here too.
 *
 * The invalidations come on several channels (src/events/invalidationPartitions.ts), and a
 * heartbeat vouches only for its own: each proves, or kills, its partition of the cache's feed
 * (invalidationFeed.ts), which is live only while every partition is.
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
  const { feed } = cache;
  if (feed.partitions !== bus.names.length)
    throw new Error(`the cache's feed has ${feed.partitions} partitions, the invalidation bus ${bus.names.length}`);
  const unvouched = new RefusalCounter('heartbeats the lease table does not confirm', log);
  const widened = new RefusalCounter('invalidations widened to a kind of tags or to everything', log);
  // Counts each partition's deaths: a heartbeat whose check outlasted one does not revive it.
  const deaths = bus.names.map(() => 0);
  const down = (partition: number) => {
    deaths[partition] = (deaths[partition] ?? 0) + 1;
    feed.down(partition);
  };
  const unsubscribe = bus.subscribe((event) => {
    const { partition } = event;
    switch (event.kind) {
      case 'heartbeat': {
        if (event.probe !== undefined) {
          const age = Date.now() - event.probe;
          // A probe dated far ahead of this clock proves nothing either.
          if (age <= feed.timeoutMs && age >= -feed.timeoutMs) {
            feed.beat(age, partition);
            return;
          }
        }
        const at = deaths[partition];
        // It proves the feed as of its arrival, not as of the lease table's answer, which can come late.
        const arrived = Date.now();
        void leases.vouches(event.from, event.group, event.tenures).then((vouched) => {
          if (!vouched) {
            cache.stats.unvouchedBeats++;
            unvouched.count('not a current lease', { from: event.from, group: event.group });
          } else if (at === deaths[partition]) feed.beat(Date.now() - arrived, partition);
        });
        return;
      }
      case 'gap':
        down(partition);
        return;
      case 'tags': {
        const { tags, changedAt, traceparents } = event;
        if (!event.lost && (event.everything || event.kinds.length > 0))
          widened.count(event.everything ? 'everything' : 'kind', { kinds: event.kinds });
        traceInvalidation(
          traceparents,
          tags.length,
          () => cache.invalidate(tags, changedAt, event.bumped) + cache.invalidateWide(event),
          bus.names[partition] ?? '',
        );
      }
    }
  });
  bus.onDown(down);
  // Sent once the bump is done, saying so: the instances that hear it need not bump again.
  cache.onWrite((tags, bumped) => void bus.publishTags(sortTags(tags), { bumped }));
  return unsubscribe;
}
