import { describe, expect, it } from 'vitest';
import type { Dynamo } from '../../src/db/client.js';
import { CheckpointWrites } from '../../src/streams/checkpointWrites.js';
import { ShardPages } from '../../src/streams/shardPages.js';
import type { ShardReader } from '../../src/streams/shardReader.js';

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * A shard with nothing new to read whose checkpoint is due, and whose checkpoint write waits
 * until `release()`: only what an empty poll touches (the reading itself is the integration
 * tests' business, on DynamoDB Local).
 */
function idleShard() {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let due = true;
  let writes = 0;
  const shard = {
    info: { shardId: 'shard-1' },
    waiting: false,
    hasIterator: true,
    get checkpointDue() {
      return due;
    },
    read: () => Promise.resolve({ records: [], next: 'next-iterator', generation: 0 }),
    saveCheckpoint: async () => {
      writes++;
      await held;
      due = false;
    },
  } as unknown as ShardReader;
  return { shard, release, writes: () => writes };
}

function pagesOf(checkpoints: CheckpointWrites, pollIntervalMs: number) {
  return new ShardPages({
    dynamo: {} as Dynamo,
    tableName: 'unused',
    publish: undefined,
    onRecords: undefined,
    log: quiet,
    pollIntervalMs,
    checkpoints,
    fenced: async (shard, work) => {
      await work(undefined);
      return true;
    },
    leaseStore: () => undefined,
    lagSeconds: () => 0,
    report: () => undefined,
    refreshSoon: () => undefined,
  });
}

describe('an empty poll while the checkpoint is being written', () => {
  it('ends at once, not caught up, and is caught up at the first empty poll after the write', async () => {
    const { shard, release, writes } = idleShard();
    const checkpoints = new CheckpointWrites({ log: quiet, report: () => undefined, fencedOff: () => undefined });
    // An interval far longer than the test may take: a poll that waited for the write would time it out.
    const pages = pagesOf(checkpoints, 600_000);
    expect(await pages.poll(shard)).toBe('checkpointing');
    expect(writes()).toBe(1);
    // Polled again while the write is still under way: no second write, still not caught up.
    expect(await pages.poll(shard)).toBe('checkpointing');
    expect(writes()).toBe(1);
    release();
    await checkpoints.settled(shard);
    expect(await pages.poll(shard)).toBe('empty');
    expect(writes()).toBe(1);
  });
});
