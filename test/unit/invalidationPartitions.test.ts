import slotOf from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import {
  byPartition,
  INVALIDATION_PARTITIONS,
  invalidationChannels,
  partitionOf,
} from '../../src/events/invalidationPartitions.js';

describe('invalidation partitions', () => {
  it.each(['MainTable', 'cache-faults-0f9c', 'a.b_c-d'])(
    'name channels of %s in the middle of each third of the slots, the same in every process',
    (table) => {
      const channels = invalidationChannels(table);
      expect(channels).toHaveLength(INVALIDATION_PARTITIONS);
      expect(invalidationChannels(table)).toEqual(channels);
      channels.forEach((channel, partition) => {
        expect(channel).toMatch(
          new RegExp(`^tablegraph:\\{${table.replace('.', '\\.')}:invalidations:${partition}\\.\\d+\\}$`),
        );
        const third = Math.floor((slotOf(channel) * INVALIDATION_PARTITIONS) / 16_384);
        expect(third).toBe(partition);
      });
    },
  );

  it('cut an invalidation by the partition of each tag and kind; everything travels on partition 0', () => {
    const tags = Array.from({ length: 30 }, (_, i) => `product:p${i}`);
    const parts = byPartition({ tags, kinds: ['order', 'user'], everything: true });
    expect(parts.map((part) => part.everything)).toEqual([true, false, false]);
    parts.forEach((part, partition) => {
      for (const tag of [...part.tags, ...part.kinds]) expect(partitionOf(tag)).toBe(partition);
      // Thirty tags reach every partition.
      expect(part.tags.length).toBeGreaterThan(0);
    });
    expect(parts.flatMap((part) => part.tags).sort()).toEqual([...tags].sort());
    expect(parts.flatMap((part) => part.kinds).sort()).toEqual(['order', 'user']);
  });
});
