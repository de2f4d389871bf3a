/**
 * A stream consumer's checkpoint writes (src/streams/consumer.ts), behind its pages rather than
 * before the next one: a page's checkpoint no longer holds up the page after it, and checkpoints
 * still go out in order, each at a record that was applied.
 *
 * - A write is chained after the shard's write under way, and writes the position the shard has
 *   when it begins: every batch processed by then, never a record that was not (the reader moves
 *   its position only past applied records: shardReader.ts's processed()).
 * - Batches processed while a write is queued share it; each batch is reported (the consumer's
 *   `batch` event) once the write that covers it is done, `checkpointed` saying whether it was.
 * - A write that fails is logged and left due: the next batch, or the next empty poll, writes it
 *   (a crash before then replays the batches, which is what checkpoints allow for). A write
 *   refused by the lease's fence drops the shard (`fencedOff`), as any refused write does.
 */
import type { BatchReport } from './consumerEvents.js';
import { LeaseLostError } from './leases.js';
import type { Fence, Tenure } from './leases.js';
import type { StreamLog } from './processor.js';
import type { ShardReader } from './shardReader.js';

export type PendingReport = Omit<BatchReport, 'checkpointed'>;

export interface CheckpointWritesOptions {
  log: StreamLog;
  /** A batch whose checkpoint write is done (or failed). */
  report: (batch: BatchReport) => void;
  /** A write was refused by the fence of `tenure`. */
  fencedOff: (tenure: Tenure) => void;
}

/** A shard's next write: chained after the one before it, covering the batches processed until it begins. */
interface Write {
  done: Promise<void>;
  queued: boolean;
  reports: PendingReport[];
}

export class CheckpointWrites {
  private readonly writes = new Map<ShardReader, Write>();

  constructor(private readonly options: CheckpointWritesOptions) {}

  /** Writes `shard`'s checkpoint behind the write under way (if it is due then), then reports `report`. */
  later(shard: ShardReader, fence: Fence | undefined, report?: PendingReport): void {
    const before = this.writes.get(shard);
    if (before?.queued) {
      if (report) before.reports.push(report);
      return;
    }
    const write: Write = { done: Promise.resolve(), queued: true, reports: report ? [report] : [] };
    write.done = (before?.done ?? Promise.resolve()).then(async () => {
      write.queued = false;
      let checkpointed = false;
      try {
        if (shard.checkpointDue) await shard.saveCheckpoint(fence);
        checkpointed = true;
      } catch (error) {
        if (error instanceof LeaseLostError) this.options.fencedOff(error.tenure);
        // Processed but not recorded: the next poll tries again, a crash replays the batch.
        else
          this.options.log.warn({ err: error, shardId: shard.info.shardId }, 'stream checkpoint not saved; will retry');
      }
      if (this.writes.get(shard) === write) this.writes.delete(shard);
      for (const each of write.reports) {
        try {
          this.options.report({ ...each, checkpointed });
        } catch (error) {
          this.options.log.warn({ err: error }, 'stream consumer batch listener failed');
        }
      }
    });
    this.writes.set(shard, write);
  }

  /** A write of `shard`'s checkpoint is under way or queued. */
  pending(shard: ShardReader): boolean {
    return this.writes.has(shard);
  }

  /** Resolves once `shard`'s writes so far are done (every shard's without one). */
  async settled(shard?: ShardReader): Promise<void> {
    if (shard) await this.writes.get(shard)?.done;
    else await Promise.all([...this.writes.values()].map((write) => write.done));
  }
}
