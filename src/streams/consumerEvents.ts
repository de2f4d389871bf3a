/**
 * What a StreamConsumer (src/streams/consumer.ts) emits, and waitForEmit(), which its wait*()
 * methods build on: the first emit from now on that matches, or a timeout.
 */
import type { EventEmitter } from 'node:events';
import type { ChangeEvent } from '../events/changeEvent.js';

/** One GetRecords page that had records, after processing and checkpointing. */
export interface BatchReport {
  shardId: string;
  records: number;
  /** Records applied before the first failure (all of them when `failures` is 0). */
  applied: number;
  failures: number;
  /** Records already applied before (redeliveries: see ProcessResult.duplicates). */
  duplicates: number;
  events: ChangeEvent[];
  /** When the page arrived from GetRecords (epoch ms). */
  readAt: number;
  /** When each of `events` was published (epoch ms), in their order. */
  publishedAt: number[];
  /** The shard's checkpoint after this batch, whether or not it was written (see `checkpointed`). */
  lastSequenceNumber: string | undefined;
  checkpointed: boolean;
  lagSeconds: number;
  durationMs: number;
}

/** One pass over the ready shards. `caughtUp`: every ready shard was polled and had nothing new. */
export interface RoundReport {
  /** Counts from 1 for each start(). */
  round: number;
  caughtUp: boolean;
}

/** A write under a lease tenure was refused: another consumer took the shard, this one dropped it. */
export interface FencedReport {
  shardId: string;
  epoch: number;
}

export interface StreamConsumerEvents {
  batch: [BatchReport];
  round: [RoundReport];
  fenced: [FencedReport];
}

/**
 * Resolves with the first `name` event emitted from now on that satisfies `predicate`. Rejects
 * with `timed out after <timeoutMs> ms waiting for <what>` when none does in time, or with what
 * `predicate` threw (the emitter never sees that error). Either way the listener is removed.
 */
export function waitForEmit<K extends keyof StreamConsumerEvents>(
  emitter: EventEmitter<StreamConsumerEvents>,
  name: K,
  predicate: (...args: StreamConsumerEvents[K]) => boolean,
  timeoutMs: number,
  what: string,
): Promise<StreamConsumerEvents[K][0]> {
  return new Promise((resolve, reject) => {
    const listener = (...args: StreamConsumerEvents[K]) => {
      let matched: boolean;
      try {
        matched = predicate(...args);
      } catch (error) {
        // A throwing predicate must not reach the polling loop through emit().
        cleanup();
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      if (!matched) return;
      cleanup();
      resolve(args[0]);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      emitter.off(name, listener as never);
    };
    emitter.on(name, listener as never);
  });
}
