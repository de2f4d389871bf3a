/**
 * What a standalone consumer tells the API instances' response caches over Redis
 * (src/events/invalidationBus.ts): the dependency tags of every batch of stream records, as it
 * reads them, and a heartbeat at most once a second while it is reading the stream (a batch, or
 * a round that found every shard it holds drained). A consumer that holds no lease does not
 * beat: it reads nothing, so its beat would vouch for shards nobody reads. A heartbeat names the
 * consumer's name and some of its lease tenures (shard and epoch): an instance takes it only
 * while its lease table shows that tenure as current and held by the publisher.
 *
 * Each tag is judged here as the instances will judge it (invalidationMessages.ts): one outside
 * the tag pattern widens to its kind, and the batch's other tags go out as they are.
 */
import type { RedisInvalidationBus } from '../events/invalidationBus.js';
import { sortTags } from '../events/invalidationMessages.js';
import type { ChangedTags } from '../streams/changedTags.js';
import type { StreamConsumer } from '../streams/consumer.js';

export const HEARTBEAT_INTERVAL_MS = 1000;

export function invalidationPublisher(bus: RedisInvalidationBus, group: string) {
  let lastBeat = 0;
  const beat = (consumer: StreamConsumer) => {
    const tenures = consumer.tenures;
    if (tenures.length === 0) return;
    const now = Date.now();
    if (now - lastBeat < HEARTBEAT_INTERVAL_MS) return;
    lastBeat = now;
    void bus.publishHeartbeat(group, tenures);
  };
  return {
    /** A batch's tags (changedTagsOf, in the consumer's onRecords hook), published before the batch is processed. */
    tags: ({ tags, changedAtMs, traceparents }: ChangedTags): void => {
      if (tags.length === 0) return;
      void bus.publishTags(sortTags(tags), { changedAt: changedAtMs, traceparents });
    },
    /** Beats for `consumer` from now on. */
    watch(consumer: StreamConsumer): void {
      consumer.on('batch', () => beat(consumer));
      consumer.on('round', (round) => round.caughtUp && beat(consumer));
    },
  };
}
