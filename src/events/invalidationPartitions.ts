/**
 * The response cache's invalidations travel on INVALIDATION_PARTITIONS channels, not one: in a
 * cluster each lands on a primary of its own, so no one primary carries every instance's
 * invalidation traffic. Every instance listens to all of them (every instance caches).
 *
 * - A tag goes to the partition a stable hash of the tag picks (the same in every process); a
 *   kind a tag widened to goes where the kind hashes; "everything" goes to partition 0. A
 *   receiver applies what it hears whatever channel it came on: the partition only decides
 *   which heartbeat vouches for it.
 * - A channel's name is derived from the table's name alone, so every process agrees on it:
 *   partition `i`'s name is the first `tablegraph:{<table>:invalidations:<i>.<n>}` (n = 0, 1, ...)
 *   whose slot lies in the middle half of the `i`-th of INVALIDATION_PARTITIONS equal ranges of
 *   the 16,384 slots. A cluster whose slots are split evenly over three primaries (what
 *   `redis-cli --cluster create` and the managed services do) so serves each partition on a
 *   different primary; with more primaries they still spread, with fewer some share one.
 * On one node the same three channels are used: one code path, and a heartbeat per channel costs
 * microseconds there.
 */
import slotOf from 'cluster-key-slot';
import type { Invalidation } from './invalidationMessages.js';
import { topicChannel } from './redisNames.js';

/** How many channels the invalidations are spread over (docs/decisions/invalidation-partitions.md). */
export const INVALIDATION_PARTITIONS = 3;

const SLOTS = 16_384;

/** The channels of `tableName`'s invalidations, partition 0 first. */
export function invalidationChannels(tableName: string): string[] {
  const width = SLOTS / INVALIDATION_PARTITIONS;
  return Array.from({ length: INVALIDATION_PARTITIONS }, (_, partition) => {
    const [low, high] = [(partition + 0.25) * width, (partition + 0.75) * width];
    // About one name in six fits: the loop ends after a few tries for any table name.
    for (let n = 0; ; n++) {
      const channel = topicChannel(tableName, `invalidations:${partition}.${n}`);
      const slot = slotOf(channel);
      if (slot >= low && slot < high) return channel;
    }
  });
}

/** The partition of `tag` (or of a kind): the CRC16 Redis Cluster places keys by, modulo the partitions. */
export const partitionOf = (tag: string): number => slotOf(tag) % INVALIDATION_PARTITIONS;

/** `invalidation` cut by partition: entry `i` holds what partition `i` carries (empty where nothing). */
export function byPartition(invalidation: Invalidation): Invalidation[] {
  const parts = Array.from({ length: INVALIDATION_PARTITIONS }, (): Invalidation => ({
    tags: [],
    kinds: [],
    everything: false,
  }));
  for (const tag of invalidation.tags) parts[partitionOf(tag)]?.tags.push(tag);
  for (const kind of invalidation.kinds) parts[partitionOf(kind)]?.kinds.push(kind);
  if (invalidation.everything && parts[0]) parts[0].everything = true;
  return parts;
}

export const isEmpty = (invalidation: Invalidation): boolean =>
  invalidation.tags.length === 0 && invalidation.kinds.length === 0 && !invalidation.everything;
