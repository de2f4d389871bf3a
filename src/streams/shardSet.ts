/**
 * The shards a stream consumer (src/streams/consumer.ts) reads: a ShardReader for each shard the
 * stream lists, kept in step with the listing (shards appear as others close, and leave once
 * trimmed from the stream), and handed out in lineage order.
 */
import type { ShardCheckpoint } from './checkpoints.js';
import { ShardReader } from './shardReader.js';
import type { ShardReaderOptions } from './shardReader.js';
import { listShards, readyShards } from './shards.js';

export class ShardSet {
  private readonly readers = new Map<string, ShardReader>();

  constructor(private readonly options: ShardReaderOptions) {}

  get size(): number {
    return this.readers.size;
  }

  values(): IterableIterator<ShardReader> {
    return this.readers.values();
  }

  /** Unfinished shards whose parent, if still in the stream, was read to its end. */
  ready(): ShardReader[] {
    return readyShards(this.readers);
  }

  /** The largest ShardReader.lagSeconds(now); 0 with no shard behind. */
  lagSeconds(now: number): number {
    let lag = 0;
    for (const shard of this.readers.values()) lag = Math.max(lag, shard.lagSeconds(now));
    return lag;
  }

  /**
   * Reads the shard list: new shards join (from their checkpoint in `checkpoints`, else from
   * `initialPosition`: TRIM_HORIZON, or LATEST on a brand-new LATEST consumer's first listing);
   * shards trimmed from the stream leave, and their checkpoints are forgotten with those in
   * `checkpoints` of shards no longer listed. Rejects, changing nothing, when the list cannot be read.
   */
  async refresh(
    checkpoints: Map<string, ShardCheckpoint> = new Map(),
    initialPosition: 'TRIM_HORIZON' | 'LATEST' = 'TRIM_HORIZON',
  ): Promise<void> {
    const listed = await listShards(this.options.streams, this.options.streamArn);
    const ids = new Set(listed.map((info) => info.shardId));
    for (const info of listed) {
      const known = this.readers.get(info.shardId);
      if (known) {
        known.info = info;
        continue;
      }
      const checkpoint = checkpoints.get(info.shardId);
      this.readers.set(info.shardId, new ShardReader(info, checkpoint, initialPosition, this.options));
    }
    const gone = [...this.readers.values()].filter((shard) => !ids.has(shard.info.shardId));
    for (const shard of gone) {
      if (!shard.finished)
        this.options.log.warn({ shardId: shard.info.shardId }, 'stream shard trimmed before it was read to its end');
      this.readers.delete(shard.info.shardId);
    }
    const stale = [...gone.map((shard) => shard.info.shardId), ...[...checkpoints.keys()].filter((id) => !ids.has(id))];
    if (stale.length > 0) await this.forget(stale);
  }

  /**
   * Starts `shardId` over from `checkpoint` (or TRIM_HORIZON without one): after another
   * consumer read it, what this one knew of the shard is stale.
   */
  reset(shardId: string, checkpoint: ShardCheckpoint | undefined): void {
    const known = this.readers.get(shardId);
    if (!known) return;
    this.readers.set(shardId, new ShardReader(known.info, checkpoint, 'TRIM_HORIZON', this.options));
  }

  /** Deletes the checkpoints of `shardIds`; a failure is only logged (a stale checkpoint is only clutter). */
  async forget(shardIds: string[]): Promise<void> {
    try {
      await this.options.store.forget(shardIds);
    } catch (error) {
      this.options.log.warn({ err: error }, 'stale stream checkpoints not deleted');
    }
  }
}
