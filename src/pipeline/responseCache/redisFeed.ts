/**
 * The invalidation feed of an API instance on Redis (N instances fed by `npm run consumer` or
 * the stream Lambda): tags from the channel are evicted here, the consumers' heartbeats keep the
 * feed live, a closed subscription makes it dead at once (messages may be lost until it is back,
 * and the first heartbeat after that flushes). This instance's mutations reach the others here too.
 */
import type { RedisInvalidationBus } from '../../events/invalidationBus.js';
import { traceInvalidation } from '../../telemetry/busSpans.js';
import type { ResponseCache } from './responseCache.js';

export function feedFromRedis(cache: ResponseCache, bus: RedisInvalidationBus): () => void {
  const unsubscribe = bus.subscribe((message) => {
    if (message.kind === 'heartbeat') cache.feed.beat();
    else {
      const { tags, changedAt, traceparents } = message;
      traceInvalidation(traceparents, tags.length, () => cache.invalidate(tags, changedAt), bus.channel);
    }
  });
  bus.onDown(() => cache.feed.down());
  cache.onWrite((tags) => void bus.publish({ v: 1, kind: 'tags', tags: [...tags] }));
  return unsubscribe;
}
