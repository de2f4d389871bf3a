/**
 * What a standalone consumer tells the API instances' response caches over Redis
 * (src/events/invalidationBus.ts): the dependency tags of every batch of stream records, as it
 * reads them, and a heartbeat at most once a second while it is reading the stream (a batch, or
 * a round that found every shard it holds drained). A consumer that holds no lease does not
 * beat: it reads nothing, so its beat would vouch for shards nobody reads.
 */
import type { RedisInvalidationBus } from '../events/invalidationBus.js';
import type { ChangedTags } from '../streams/changedTags.js';
import type { StreamConsumer } from '../streams/consumer.js';

export const HEARTBEAT_INTERVAL_MS = 1000;

export function invalidationPublisher(bus: RedisInvalidationBus, owner: string) {
  let lastBeat = 0;
  const beat = (consumer: StreamConsumer) => {
    if ((consumer.leasesHeld ?? 1) === 0) return;
    const now = Date.now();
    if (now - lastBeat < HEARTBEAT_INTERVAL_MS) return;
    lastBeat = now;
    void bus.publish({ v: 1, kind: 'heartbeat', from: owner });
  };
  return {
    /** A batch's tags (changedTagsOf, in the consumer's onRecords hook), published before the batch is processed. */
    tags: ({ tags, changedAtMs, traceparents }: ChangedTags): void => {
      if (tags.length === 0) return;
      void bus.publish({
        v: 1,
        kind: 'tags',
        tags,
        changedAt: changedAtMs,
        ...(traceparents.length > 0 ? { traceparents } : {}),
      });
    },
    /** Beats for `consumer` from now on. */
    watch(consumer: StreamConsumer): void {
      consumer.on('batch', () => beat(consumer));
      consumer.on('round', (round) => round.caughtUp && beat(consumer));
    },
  };
}
