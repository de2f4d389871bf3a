/**
 * A stream consumer's work on one shard at a time (src/streams/consumer.ts runs it for every
 * shard it reads, each round): read the next page, apply it, publish its events and have it
 * checkpointed.
 *
 * - A shard's next page is read while the page before it is still applied (two at most): the
 *   later page's events wait for the earlier one's, and when the earlier one fails a record the
 *   later one is abandoned and read again from that record (its soldCount writes, if done, are
 *   idempotent), so the events still go out in stream order and each page is applied in full.
 * - A page is checkpointed after it is processed, never before, behind the next page and in
 *   order (src/streams/checkpointWrites.ts); a shard read to its end is finished at once.
 * - On leases every write runs under the shard's fence, and events go out only once the tenure
 *   was found current since the page was read: by one of its fenced soldCount writes
 *   committing, else by a read of the lease (see handleBatch).
 */
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { Dynamo } from '../db/client.js';
import { LeaseLostError } from './leases.js';
import type { Fence, LeaseStore } from './leases.js';
import type { BatchReport } from './consumerEvents.js';
import { processRecords } from './processor.js';
import { describeEvent } from '../events/changeEvent.js';
import type { PublishChangeEvent, StreamLog } from './processor.js';
import type { TransactionTiming } from './soldCount.js';
import type { ShardPage, ShardReader } from './shardReader.js';
import type { CheckpointWrites } from './checkpointWrites.js';

/**
 * How a shard's poll went: `records` keeps the consumer reading at once, `empty` counts toward
 * caught up, `checkpointing` is nothing new while the shard's checkpoint write is still under way
 * (not caught up yet: polled again after the interval).
 */
export type PollOutcome = 'records' | 'empty' | 'checkpointing' | 'error' | 'waiting';

/** Runs work under the fence of a shard's lease; false when the shard is not (or no longer) ours. */
export type Fenced = (shard: ShardReader, work: (fence: Fence | undefined) => Promise<void>) => Promise<boolean>;

export interface ShardPagesOptions {
  dynamo: Dynamo;
  tableName: string;
  publish: PublishChangeEvent | undefined;
  onRecords: ((records: readonly _Record[]) => void) | undefined;
  log: StreamLog;
  pollIntervalMs: number;
  /** The consumer's checkpoint writes, behind the pages. */
  checkpoints: CheckpointWrites;
  /** See Fenced; the consumer drops a shard whose fence refused a write. */
  fenced: Fenced;
  /** The lease store while the consumer reads on leases. */
  leaseStore: () => LeaseStore | undefined;
  /** The consumer's lag, for the batch report. */
  lagSeconds: () => number;
  /** A batch done and checkpointed (or not) at once: the consumer's `batch` event. */
  report: (batch: BatchReport) => void;
  /** The shard list should be read again soon (a shard ended or may have left the stream). */
  refreshSoon: () => void;
}

/** A page's events held back because the page before it failed a record: the page is read again. */
class PageAbandonedError extends Error {
  constructor() {
    super('the page before this one did not complete; this one is read again');
    this.name = 'PageAbandonedError';
  }
}

export class ShardPages {
  private readonly options: ShardPagesOptions;
  /** Each shard's page under way: done once it is processed or abandoned (see poll). */
  private readonly applying = new Map<ShardReader, Promise<void>>();

  constructor(options: ShardPagesOptions) {
    this.options = options;
  }

  /** Resolves once every page under way is processed or abandoned. */
  async settled(): Promise<void> {
    await Promise.all(this.applying.values());
  }

  /**
   * Reads `shard`'s next page and sets it going, while the page before it may still be applied:
   * at most two pages of a shard are under way, the later one's events held until the earlier
   * one's are out (handleBatch). Returns once this page is under way and the one before it is
   * done, or once this poll is over (an empty page, an error). Never throws.
   */
  async poll(shard: ShardReader): Promise<PollOutcome> {
    if (shard.waiting) return 'waiting';
    const before = this.applying.get(shard);
    if (before && !shard.hasIterator) {
      // A new iterator starts after the last processed record: the page under way goes first.
      await before;
      return 'records';
    }
    let begin: () => void = () => undefined;
    const begun = new Promise<undefined>((resolve) => (begin = () => resolve(undefined)));
    const outcome = await Promise.race([begun, this.pollPage(shard, before, begin)]);
    if (outcome !== undefined) return outcome;
    await before;
    return 'records';
  }

  /** One GetRecords on `shard`, processed and checkpointed (see poll). Never throws. */
  private async pollPage(
    shard: ShardReader,
    before: Promise<void> | undefined,
    begin: () => void,
  ): Promise<PollOutcome> {
    const { checkpoints, pollIntervalMs } = this.options;
    const started = performance.now();
    let outcome: PollOutcome = 'error';
    let reading = true;
    try {
      const held = await this.options.fenced(shard, async (fence) => {
        const readStarted = performance.now();
        const page = await shard.read();
        const getRecordsMs = performance.now() - readStarted;
        reading = false;
        if (page.records.length === 0 && before) {
          // Nothing new yet while a page is applied: look again after the poll interval, or as
          // soon as that page is done.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pollIntervalMs);
            void before.then(() => {
              clearTimeout(timer);
              resolve();
            });
          });
          outcome = 'records';
          return;
        }
        if (page.records.length === 0) {
          // Caught up: the checkpoint is written (again, if a write failed) before saying so. A
          // write under way is not waited for: the shard is polled again after the interval (new
          // records go on behind it), and is caught up at the first empty poll once it is done.
          // Waiting for it here (up to the interval) delayed the next read by that wait on top of
          // the interval.
          if (shard.checkpointDue) checkpoints.later(shard, fence);
          if (page.next === undefined) {
            await this.finish(shard, fence);
            outcome = 'empty';
            return;
          }
          outcome = checkpoints.pending(shard) ? 'checkpointing' : 'empty';
          return;
        }
        const applied = this.handleBatch(shard, page, before, started, { readAt: Date.now(), getRecordsMs }, fence);
        const done = applied.then(
          () => undefined,
          () => undefined,
        );
        this.applying.set(shard, done);
        void done.then(() => this.applying.get(shard) === done && this.applying.delete(shard));
        begin();
        await applied;
        outcome = 'records';
      });
      return held ? outcome : 'waiting';
    } catch (error) {
      // A page that could not be handled is read again, after the last record processed.
      if (!reading) shard.abandon();
      if (shard.recover(error)) this.options.refreshSoon(); // the shard may have left the stream
      return 'error';
    }
  }

  /**
   * Processes a page (soldCount under the fence), publishing each event as soon as its record
   * and every earlier one are applied (processor.ts) and the page before it is done, then has
   * it checkpointed (under the fence, behind the next page: checkpointWrites.ts). A page whose
   * predecessor failed a record is abandoned: nothing of it is published or recorded.
   * Events cannot be fenced by DynamoDB: on leases they go out only once the tenure was found
   * current after the page was read, by a soldCount transaction of the page that committed under
   * the fence or else by a consistent read of the lease (made only for an event ready before any
   * such commit); a holder stalled between that proof and a publish can still publish events
   * twice, which every API instance drops by `seq`. Throws LeaseLostError when fenced off.
   */
  private async handleBatch(
    shard: ShardReader,
    { records, next, generation }: ShardPage,
    before: Promise<void> | undefined,
    started: number,
    { readAt, getRecordsMs }: { readAt: number; getRecordsMs: number },
    fence: Fence | undefined,
  ): Promise<void> {
    const { dynamo, tableName, onRecords, log } = this.options;
    // Whether this page follows on from what was processed once the page before it is done:
    // not when that one failed a record or was abandoned (reading went back to before this page).
    let beforeDoneAt: number | undefined;
    const follows = (async () => {
      await before;
      beforeDoneAt = Date.now();
      return shard.current(generation);
    })();
    try {
      onRecords?.(records);
    } catch (error) {
      log.warn({ err: error }, 'stream consumer onRecords hook failed');
    }
    // On leases an event goes out only once the tenure was found current at some point since the
    // page was read: by a soldCount transaction of the page committed under the fence (what most
    // events wait for anyway), else by a consistent read of the lease, made only when an event
    // is ready before any such commit (an event that moves no counter, a redelivery).
    let checkedAt: number | undefined;
    const leaseStore = this.options.leaseStore();
    let check: Promise<boolean> | undefined;
    const current = (): boolean | Promise<boolean> => {
      if (!fence || !leaseStore || checkedAt !== undefined) return true;
      check ??= leaseStore.isCurrent(fence.tenure).then((held) => {
        if (held) checkedAt ??= Date.now();
        return held;
      });
      return check;
    };
    const onTransaction = ({ committed }: TransactionTiming) => {
      if (committed && fence) checkedAt ??= Date.now();
    };
    // When each event went out: how long a change waits between its page's read and its publish.
    const publishedAt: number[] = [];
    const given = this.options.publish;
    const publish: PublishChangeEvent | undefined =
      given &&
      (async (event) => {
        if (!(await follows)) throw new PageAbandonedError();
        if (fence && !(await current())) throw new LeaseLostError(fence.tenure);
        await given(event);
        publishedAt.push(Date.now());
      });
    const result = await processRecords(records, {
      doc: dynamo.doc,
      tableName,
      publish,
      log,
      fence,
      onTransaction,
    });
    const processedAt = Date.now();
    const lost = result.failures.find((failure) => failure.error instanceof LeaseLostError);
    if (lost) throw lost.error;
    if (!(await follows)) {
      // Its soldCount writes may be done (they are idempotent); it is read and processed again.
      log.debug({ shardId: shard.info.shardId, records: records.length }, 'stream page abandoned: read again');
      return;
    }
    const failure = result.failures[0];
    const applied = failure ? failure.index : records.length;
    if (failure) {
      log.warn(
        { err: failure.error, shardId: shard.info.shardId, sequenceNumber: failure.sequenceNumber },
        'stream record failed; retrying from it',
      );
    }
    shard.processed(records, applied, failure?.sequenceNumber);
    if (result.events.length > 0) {
      log.debug(
        {
          shardId: shard.info.shardId,
          records: records.length,
          readAt,
          getRecordsMs: Math.round(getRecordsMs),
          beforeDoneAt,
          processedAt,
          checkedAt,
          transactions: result.transactions.map(({ lines, actions, ms }) => ({ lines, actions, ms: Math.round(ms) })),
          published: result.events.map((event, i) => ({ ...describeEvent(event), at: publishedAt[i] })),
        },
        'stream events published',
      );
    }
    const report = {
      shardId: shard.info.shardId,
      records: records.length,
      applied,
      failures: result.failures.length,
      duplicates: result.duplicates,
      events: result.events,
      readAt,
      publishedAt,
      lastSequenceNumber: shard.lastSequenceNumber,
      lagSeconds: this.options.lagSeconds(),
      durationMs: performance.now() - started,
    };
    if (!failure && next === undefined) {
      let checkpointed = false;
      try {
        await this.finish(shard, fence);
        checkpointed = true;
      } catch (error) {
        if (error instanceof LeaseLostError) throw error;
        log.warn({ err: error, shardId: shard.info.shardId }, 'stream checkpoint not saved; will retry');
      }
      this.options.report({ ...report, checkpointed });
      return;
    }
    this.options.checkpoints.later(shard, fence, report);
  }

  /** The shard is closed and read to its end: record it, and look for its children now. */
  private async finish(shard: ShardReader, fence: Fence | undefined): Promise<void> {
    this.options.refreshSoon();
    await this.options.checkpoints.settled(shard); // the checkpoints before it first
    await shard.finish(fence);
  }
}
