/**
 * One shard as the stream consumer (src/streams/consumer.ts) reads it: where it has got to (in
 * memory and in its checkpoint item), the iterator that reads on from there, and what a failed
 * read does to both.
 *
 * - The position is a record that failed (reading retries AT it), else the last processed record
 *   (reading resumes AFTER it), else where the shard starts for this consumer: TRIM_HORIZON, or
 *   LATEST for a brand-new LATEST consumer.
 * - An iterator is acquired from the position whenever there is none. An expired one (iterators
 *   live 15 minutes) is dropped and acquired again, at once the first time.
 * - Records trimmed before they were read restart the shard at TRIM_HORIZON; any other error backs
 *   the shard off (exponential, full jitter, attempts never run out) and `waiting` says until when.
 *
 * A reader does not process records, and writes its checkpoint only when told: the consumer
 * processes a page, reports what was processed (processed()) and then has the checkpoint saved
 * (saveCheckpoint(), or finish() at the shard's end), never before (delivery is at least once).
 */
import {
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ResourceNotFoundException,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import type { _Record, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { backoffDelay } from '../db/retry.js';
import type { RetryPolicy } from '../db/retry.js';
import { STREAM_CHECKPOINT_PK } from '../table/keys.js';
import type { CheckpointStore, ShardCheckpoint } from './checkpoints.js';
import { LeaseLostError } from './leases.js';
import type { Fence } from './leases.js';
import type { StreamLog } from './processor.js';
import type { ShardInfo } from './shards.js';

/** What every reader of one consumer shares. */
export interface ShardReaderOptions {
  streams: DynamoDBStreamsClient;
  streamArn: string;
  /** The consumer's checkpoints of this stream. */
  store: CheckpointStore;
  /** GetRecords Limit. */
  batchSize: number;
  /** Backoff after an error; `maxAttempts` is not consulted (a shard is retried for as long as it is listed). */
  backoff: RetryPolicy;
  log: StreamLog;
}

/** One GetRecords page. `next` is undefined once a closed shard has been read to its end. */
export interface ShardPage {
  records: _Record[];
  next: string | undefined;
  /** The reader's generation when it was read: see ShardReader.current(). */
  generation: number;
}

type Position =
  | { type: 'TRIM_HORIZON' | 'LATEST' }
  | { type: 'AT_SEQUENCE_NUMBER' | 'AFTER_SEQUENCE_NUMBER'; sequenceNumber: string };

export class ShardReader {
  /** Replaced with each listing of the stream's shards. */
  info: ShardInfo;
  private readonly options: ShardReaderOptions;
  private iterator: string | undefined;
  /** Where a new iterator starts when there is no processed record to start after. */
  private start: Position;
  /** A record that failed: the next iterator starts AT it. */
  private retryFrom: string | undefined;
  private lastProcessed: string | undefined;
  private ended: boolean;
  /** The checkpoint item lags behind lastProcessed / ended. */
  private due = false;
  /** Counts what made the checkpoint due: a save clears `due` only if nothing did so while it ran. */
  private dueSince = 0;
  /** Moves on whenever reading goes back (a failed record, a page abandoned): pages read before are stale. */
  private generation = 0;
  private consecutiveErrors = 0;
  private retryAt = 0;
  private newestRecordAt: number | undefined;
  private caughtUp = false;

  /**
   * Resumes after `checkpoint`, or without one starts at `initialPosition`. A closed shard has no
   * "latest" records: LATEST without a checkpoint skips it entirely (it is finished at once).
   */
  constructor(
    info: ShardInfo,
    checkpoint: ShardCheckpoint | undefined,
    initialPosition: 'TRIM_HORIZON' | 'LATEST',
    options: ShardReaderOptions,
  ) {
    const skipHistory = initialPosition === 'LATEST' && !checkpoint;
    this.info = info;
    this.options = options;
    this.start = { type: skipHistory ? 'LATEST' : 'TRIM_HORIZON' };
    this.lastProcessed = checkpoint?.sequenceNumber;
    this.ended = (checkpoint?.finished ?? false) || (skipHistory && info.endingSequenceNumber !== undefined);
  }

  /** The sequence number of the last processed record; undefined if none was yet. */
  get lastSequenceNumber(): string | undefined {
    return this.lastProcessed;
  }

  /** The shard is closed and was read to its end (or skipped): it is never read again. */
  get finished(): boolean {
    return this.ended;
  }

  /** The checkpoint item lags behind the position: saveCheckpoint() has yet to succeed. */
  get checkpointDue(): boolean {
    return this.due;
  }

  /** Backing off after an error: read() must not be called before the backoff ends. */
  get waiting(): boolean {
    return Date.now() < this.retryAt;
  }

  /**
   * Age in seconds at `now` of the newest processed record; 0 when the last read found nothing
   * new, when the shard is finished, or before any record was processed.
   */
  lagSeconds(now: number): number {
    if (this.ended || this.caughtUp || this.newestRecordAt === undefined) return 0;
    return (now - this.newestRecordAt) / 1000;
  }

  /** An iterator is at hand: read() need not acquire one (from the last processed record) first. */
  get hasIterator(): boolean {
    return this.iterator !== undefined;
  }

  /**
   * Whether a page read under `generation` still follows on from what was processed: false once
   * reading went back (a record failed, or a page was abandoned) after it was read.
   */
  current(generation: number): boolean {
    return generation === this.generation;
  }

  /**
   * One GetRecords from the position, acquiring an iterator first when there is none. The
   * iterator moves on to the page's `next` at once (a closed shard's last page to undefined:
   * call finish() once it is processed), so that the next page can be read while this one is
   * processed; processed() or abandon() then says how that went. Throws what the Streams API
   * threw; pass that to recover().
   */
  async read(): Promise<ShardPage> {
    this.iterator ??= await this.acquireIterator();
    const generation = this.generation;
    const page = await this.options.streams.send(
      new GetRecordsCommand({ ShardIterator: this.iterator, Limit: this.options.batchSize }),
    );
    const records = page.Records ?? [];
    this.consecutiveErrors = 0;
    if (generation === this.generation) this.iterator = page.NextShardIterator;
    if (records.length === 0) this.caughtUp = true;
    return { records, next: page.NextShardIterator, generation };
  }

  /**
   * A page could not be handled: reading starts again after the last processed record, and
   * every page read since is stale.
   */
  abandon(): void {
    this.iterator = undefined;
    this.generation++;
  }

  /**
   * Moves past the first `applied` records of a page (read under the current generation, and
   * every page before it processed): reading goes on from where it is, or, when the record after
   * them failed (`failedAt`, its sequence number), back AT that record once a backoff has passed
   * (the pages read since are stale). Makes the checkpoint due unless the records were all
   * checkpoint items.
   */
  processed(records: readonly _Record[], applied: number, failedAt?: string): void {
    if (applied > 0) {
      const last = records[applied - 1]?.dynamodb;
      this.lastProcessed = last?.SequenceNumber;
      this.newestRecordAt = last?.ApproximateCreationDateTime?.getTime() ?? Date.now();
      // Our own checkpoint writes come back through the stream: checkpointing a batch of
      // nothing but checkpoints would feed the stream forever.
      if (records.slice(0, applied).some((record) => !isCheckpointRecord(record))) this.makeDue();
    }
    this.caughtUp = false;
    if (failedAt === undefined) {
      this.retryFrom = undefined;
    } else {
      this.iterator = undefined;
      this.retryFrom = failedAt;
      this.generation++;
      this.backOff();
    }
  }

  /**
   * The shard is closed and was read to its end: it is never read again, and its checkpoint is
   * saved to say so. Rejects like saveCheckpoint() (the shard stays finished, its checkpoint due).
   */
  async finish(fence?: Fence): Promise<void> {
    this.ended = true;
    this.iterator = undefined;
    this.makeDue();
    await this.saveCheckpoint(fence);
  }

  /**
   * Writes the checkpoint item for the position as it is now (under `fence`, when reading on a
   * lease). Rejects when the write fails (it stays due), with LeaseLostError when fenced off. A
   * stored checkpoint further on is left as it is (never moved backwards) and logged. Records
   * processed while it is written leave it due (the consumer writes it again after them).
   */
  async saveCheckpoint(fence?: Fence): Promise<void> {
    const since = this.dueSince;
    const checkpoint: ShardCheckpoint = {
      shardId: this.info.shardId,
      sequenceNumber: this.lastProcessed,
      finished: this.ended,
    };
    if ((await this.options.store.save(checkpoint, fence)) === 'behind') {
      this.options.log.warn(
        { shardId: checkpoint.shardId, sequenceNumber: checkpoint.sequenceNumber },
        'stream checkpoint not moved backwards: the stored one is further on',
      );
    }
    if (this.dueSince === since) this.due = false;
  }

  private makeDue(): void {
    this.due = true;
    this.dueSince++;
  }

  /**
   * saveCheckpoint(), logging a failure instead of rejecting (except LeaseLostError: the caller
   * drops the shard). A checkpoint that could not be written holds nothing up: events keep
   * flowing, a crash replays more.
   */
  async retryCheckpoint(fence?: Fence): Promise<void> {
    try {
      await this.saveCheckpoint(fence);
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      this.options.log.warn(
        { err: error, shardId: this.info.shardId },
        'stream checkpoint still not saved; will retry',
      );
    }
  }

  /**
   * Recovers from an error of read() or of handling its page; never throws. Returns true when the
   * shard may have left the stream (ResourceNotFoundException): the shard list should be read again.
   */
  recover(error: unknown): boolean {
    const shardId = this.info.shardId;
    const { log } = this.options;
    if (error instanceof ExpiredIteratorException) {
      // Iterators live 15 minutes: get a new one from the checkpoint, at once the first time.
      log.info({ shardId }, 'stream shard iterator expired; re-acquiring from the checkpoint');
      this.iterator = undefined;
      if (this.consecutiveErrors++ > 0) this.backOff();
      return false;
    }
    this.consecutiveErrors++;
    if (error instanceof TrimmedDataAccessException) {
      // The checkpoint is older than the stream's retention: what lay between is gone.
      log.error({ shardId, sequenceNumber: this.lastProcessed }, 'stream records trimmed before they were read');
      this.iterator = undefined;
      this.retryFrom = undefined;
      this.lastProcessed = undefined;
      this.start = { type: 'TRIM_HORIZON' };
      this.generation++;
      return false;
    }
    log.warn({ err: error, shardId, attempt: this.consecutiveErrors }, 'stream shard read failed; backing off');
    this.backOff();
    return error instanceof ResourceNotFoundException;
  }

  /** A failed record is retried AT itself, else reading resumes AFTER the last processed one. */
  private position(): Position {
    if (this.retryFrom) return { type: 'AT_SEQUENCE_NUMBER', sequenceNumber: this.retryFrom };
    if (this.lastProcessed) return { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: this.lastProcessed };
    return this.start;
  }

  private async acquireIterator(): Promise<string> {
    const position = this.position();
    const { ShardIterator } = await this.options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: this.options.streamArn,
        ShardId: this.info.shardId,
        ShardIteratorType: position.type,
        SequenceNumber: 'sequenceNumber' in position ? position.sequenceNumber : undefined,
      }),
    );
    if (!ShardIterator) throw new Error(`no shard iterator for ${this.info.shardId}`);
    return ShardIterator;
  }

  private backOff(): void {
    this.retryAt = Date.now() + backoffDelay(Math.min(this.consecutiveErrors, 16), this.options.backoff);
  }
}

const isCheckpointRecord = (record: _Record): boolean => record.dynamodb?.Keys?.PK?.S === STREAM_CHECKPOINT_PK;
