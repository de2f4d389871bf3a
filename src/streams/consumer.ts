/**
 * An in-process consumer of the table's stream, for local and self-hosted use (on AWS the same
 * processing runs as a Lambda function: src/lambda/streams.ts).
 *
 * - Reads every shard of the stream, a child shard only once its parent was read to its end
 *   (records of one item are in order only along a lineage).
 * - Resumes after a restart from its checkpoints (src/streams/checkpoints.ts):
 *   AFTER_SEQUENCE_NUMBER of the last processed record of each shard.
 * - Checkpoints after each processed batch, never before: delivery is at least once, and the
 *   processing (src/streams/processor.ts) is idempotent where it writes.
 * - An expired iterator is re-acquired from the checkpoint; any other error backs that shard
 *   off (exponential, full jitter) and the consumer keeps going.
 *
 * Where a brand-new consumer (no checkpoint at all) starts is `initialPosition`. The default is
 * TRIM_HORIZON, the oldest record still in the stream (24 hours on AWS): soldCount must count
 * every order, and replaying old records is harmless (sale markers). LATEST skips the history,
 * so orders placed before the first start would never be counted; it suits a consumer that only
 * feeds live subscriptions. (With LATEST, until a first record is checkpointed a restart starts
 * at LATEST again.) Shards that appear later, and shards without a checkpoint of a consumer that
 * has checkpoints, are always read from TRIM_HORIZON.
 *
 * One process per `consumerName` and table: two consumers under one name would overwrite each
 * other's checkpoints. Each server instance that serves subscriptions needs every event, so it
 * runs its own consumer (own name); DynamoDB Streams allows about two readers per shard.
 */
import { EventEmitter } from 'node:events';
import {
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ResourceNotFoundException,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import type { _Record, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { backoffDelay } from '../db/batchGet.js';
import type { Dynamo } from '../db/client.js';
import { STREAM_CHECKPOINT_PK } from '../table/keys.js';
import { CheckpointStore } from './checkpoints.js';
import type { ShardCheckpoint } from './checkpoints.js';
import { processRecords } from './processor.js';
import type { OrderEvent, PublishOrderEvent, StreamLog } from './processor.js';
import { findStreamArn, listShards } from './shards.js';
import type { ShardInfo } from './shards.js';

export interface StreamConsumerOptions {
  /** The table's clients: DescribeTable, the processing's writes and the checkpoints. */
  dynamo: Dynamo;
  /** See createStreamsClient (src/streams/streamsClient.ts). Not destroyed by stop(). */
  streams: DynamoDBStreamsClient;
  tableName: string;
  publish?: PublishOrderEvent | undefined;
  /** Names this consumer's checkpoints; default `default`. */
  consumerName?: string | undefined;
  /** Where a consumer without any checkpoint starts; default TRIM_HORIZON (see above). */
  initialPosition?: 'TRIM_HORIZON' | 'LATEST' | undefined;
  /** Pause between polls while every shard is idle; default 200 ms. */
  pollIntervalMs?: number | undefined;
  /** How often the shard list is read again (also after any shard ends); default 10 s. */
  shardRefreshMs?: number | undefined;
  /** GetRecords Limit; default 1000 (the maximum). */
  batchSize?: number | undefined;
  /** Backoff after an error, per shard; attempts never run out. Default 100 ms doubling to 5 s. */
  backoff?: { baseDelayMs: number; maxDelayMs: number } | undefined;
  /** Items processed at once within a batch (see processRecords). */
  concurrency?: number | undefined;
  log?: StreamLog | undefined;
  /** Called after each batch with records (metrics, tests); a throw is logged and ignored. */
  onBatch?: ((batch: BatchReport) => void) | undefined;
}

/** One GetRecords page that had records, after processing and checkpointing. */
export interface BatchReport {
  shardId: string;
  records: number;
  /** Records applied before the first failure (all of them when `failures` is 0). */
  applied: number;
  failures: number;
  events: OrderEvent[];
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

export interface StreamConsumerEvents {
  batch: [BatchReport];
  round: [RoundReport];
}

type Position =
  | { type: 'TRIM_HORIZON' | 'LATEST' }
  | { type: 'AT_SEQUENCE_NUMBER' | 'AFTER_SEQUENCE_NUMBER'; sequenceNumber: string };

interface ShardState {
  info: ShardInfo;
  iterator: string | undefined;
  /** Where a new iterator starts when there is no processed record to start after. */
  start: Position;
  /** A record that failed: the next iterator starts AT it. */
  retryFrom: string | undefined;
  lastSequenceNumber: string | undefined;
  /** The checkpoint item lags behind lastSequenceNumber / finished. */
  checkpointDue: boolean;
  finished: boolean;
  consecutiveErrors: number;
  retryAt: number;
  newestRecordAt: number | undefined;
  caughtUp: boolean;
}

const noLog: StreamLog = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export class StreamConsumer extends EventEmitter<StreamConsumerEvents> {
  private readonly options: StreamConsumerOptions;
  private readonly log: StreamLog;
  private readonly consumerName: string;
  private readonly pollIntervalMs: number;
  private readonly shardRefreshMs: number;
  private readonly backoff: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number };
  private shards = new Map<string, ShardState>();
  private store: CheckpointStore | undefined;
  private arn: string | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private nextRefreshAt = 0;
  private rounds = 0;

  constructor(options: StreamConsumerOptions) {
    super();
    this.options = options;
    this.log = options.log ?? noLog;
    this.consumerName = options.consumerName ?? 'default';
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    this.shardRefreshMs = options.shardRefreshMs ?? 10_000;
    this.backoff = { maxAttempts: Infinity, ...(options.backoff ?? { baseDelayMs: 100, maxDelayMs: 5000 }) };
    if (options.onBatch) {
      const onBatch = options.onBatch;
      this.on('batch', (batch) => {
        try {
          onBatch(batch);
        } catch (error) {
          this.log.warn({ err: error }, 'stream consumer onBatch hook failed');
        }
      });
    }
  }

  /**
   * Finds the stream, loads the checkpoints and the shard list, then polls in the background
   * until stop(). Rejects (and does not run) when the table has no stream or cannot be read.
   */
  async start(): Promise<void> {
    if (this.loop) throw new Error('the stream consumer is already running');
    const { dynamo, tableName } = this.options;
    const arn = await findStreamArn(dynamo.client, tableName);
    const store = new CheckpointStore(dynamo.doc, tableName, this.consumerName, arn);
    const { checkpoints, otherStreams } = await store.load();
    this.arn = arn;
    this.store = store;
    this.shards = new Map();
    this.stopping = false;
    this.rounds = 0;
    const fresh = checkpoints.size === 0;
    await this.refreshShards(checkpoints, fresh && this.options.initialPosition === 'LATEST');
    if (otherStreams.length > 0) await this.forget(otherStreams);
    this.log.info({ streamArn: arn, shards: this.shards.size, resumed: !fresh }, 'stream consumer started');
    this.loop = this.run();
  }

  /** Stops polling once the current batch is processed and checkpointed. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  get running(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  get streamArn(): string | undefined {
    return this.arn;
  }

  /**
   * Age in seconds of the newest processed record, on the shard furthest behind; 0 when every
   * shard's last poll found nothing new. Record times are whole seconds on AWS (and whole
   * minutes on DynamoDB Local), so small values are approximate.
   */
  get lagSeconds(): number {
    let lag = 0;
    const now = Date.now();
    for (const shard of this.shards.values()) {
      if (shard.finished || shard.caughtUp || shard.newestRecordAt === undefined) continue;
      lag = Math.max(lag, (now - shard.newestRecordAt) / 1000);
    }
    return lag;
  }

  /** Resolves with the first batch from now on that satisfies `predicate`. */
  waitForBatch(predicate: (batch: BatchReport) => boolean, timeoutMs = 10_000): Promise<BatchReport> {
    return this.waitFor('batch', predicate, timeoutMs, 'a matching stream batch');
  }

  /** Resolves with the first event published from now on that satisfies `predicate`. */
  async waitForEvent(predicate: (event: OrderEvent) => boolean, timeoutMs = 10_000): Promise<OrderEvent> {
    const batch = await this.waitFor('batch', (b) => b.events.some(predicate), timeoutMs, 'a matching order event');
    return batch.events.find(predicate) as OrderEvent;
  }

  /**
   * Resolves after a complete round, begun after this call, in which every readable shard had
   * nothing new: everything written before the call has been processed. (On AWS an empty
   * GetRecords page does not prove a shard is drained; this is meant for DynamoDB Local.)
   */
  async waitUntilCaughtUp(timeoutMs = 10_000): Promise<void> {
    const current = this.rounds; // the round under way, if any, may have polled before the call
    await this.waitFor(
      'round',
      (report) => report.caughtUp && report.round > current,
      timeoutMs,
      'the stream to be drained',
    );
  }

  private waitFor<K extends keyof StreamConsumerEvents>(
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
        this.off(name, listener as never);
      };
      this.on(name, listener as never);
    });
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const round = ++this.rounds;
      let busy = false;
      let caughtUp = false;
      try {
        if (Date.now() >= this.nextRefreshAt) await this.refreshShards();
        for (const shard of this.shards.values()) {
          // A shard that ended while its checkpoint could not be written is never polled again.
          if (shard.finished && shard.checkpointDue) await this.retryCheckpoint(shard);
        }
        const polled = await Promise.all(this.readyShards().map((shard) => this.poll(shard)));
        busy = polled.some((outcome) => outcome === 'records');
        caughtUp = polled.every((outcome) => outcome === 'empty');
      } catch (error) {
        // Only the shard listing gets here (poll handles its own errors): try it again later.
        this.log.warn({ err: error }, 'stream consumer could not list the shards; retrying');
        this.nextRefreshAt = Date.now() + this.backoff.maxDelayMs;
      }
      this.emit('round', { round, caughtUp });
      // A busy stream is read again at once; an idle one is polled every pollIntervalMs.
      if (!busy && !this.stopping) await this.pause(this.pollIntervalMs);
    }
  }

  /** Unfinished shards whose parent, if still in the stream, was read to its end. */
  private readyShards(): ShardState[] {
    return [...this.shards.values()].filter((shard) => {
      if (shard.finished) return false;
      const parent = shard.info.parentShardId === undefined ? undefined : this.shards.get(shard.info.parentShardId);
      return parent === undefined || parent.finished;
    });
  }

  /** One GetRecords on `shard`, processed and checkpointed. Never throws. */
  private async poll(shard: ShardState): Promise<'records' | 'empty' | 'error' | 'waiting'> {
    if (Date.now() < shard.retryAt) return 'waiting';
    const started = performance.now();
    try {
      if (shard.checkpointDue) await this.retryCheckpoint(shard);
      shard.iterator ??= await this.iteratorFor(shard);
      const page = await this.options.streams.send(
        new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: this.options.batchSize ?? 1000 }),
      );
      const records = page.Records ?? [];
      shard.consecutiveErrors = 0;
      if (records.length === 0) {
        shard.iterator = page.NextShardIterator;
        shard.caughtUp = true;
        if (page.NextShardIterator === undefined) await this.finish(shard);
        return 'empty';
      }
      await this.handleBatch(shard, records, page.NextShardIterator, started);
      return 'records';
    } catch (error) {
      this.onShardError(shard, error);
      return 'error';
    }
  }

  private async handleBatch(
    shard: ShardState,
    records: _Record[],
    next: string | undefined,
    started: number,
  ): Promise<void> {
    const { dynamo, tableName, publish, concurrency } = this.options;
    const result = await processRecords(records, { doc: dynamo.doc, tableName, publish, log: this.log, concurrency });
    const failure = result.failures[0];
    const applied = failure ? failure.index : records.length;
    if (applied > 0) {
      const last = records[applied - 1]?.dynamodb;
      shard.lastSequenceNumber = last?.SequenceNumber;
      shard.newestRecordAt = last?.ApproximateCreationDateTime?.getTime() ?? Date.now();
      // Our own checkpoint writes come back through the stream: checkpointing a batch of
      // nothing but checkpoints would feed the stream forever.
      if (records.slice(0, applied).some((record) => !isCheckpointRecord(record))) shard.checkpointDue = true;
    }
    shard.caughtUp = false;
    if (failure) {
      this.log.warn(
        { err: failure.error, shardId: shard.info.shardId, sequenceNumber: failure.sequenceNumber },
        'stream record failed; retrying from it',
      );
      shard.iterator = undefined;
      shard.retryFrom = failure.sequenceNumber;
      this.backOff(shard);
    } else {
      shard.iterator = next;
      shard.retryFrom = undefined;
    }
    let checkpointed = false;
    try {
      if (!failure && next === undefined) await this.finish(shard);
      else if (shard.checkpointDue) await this.saveCheckpoint(shard);
      checkpointed = !shard.checkpointDue;
    } catch (error) {
      // Processed but not recorded: the next poll tries again, a crash replays the batch.
      this.log.warn({ err: error, shardId: shard.info.shardId }, 'stream checkpoint not saved; will retry');
    }
    this.emit('batch', {
      shardId: shard.info.shardId,
      records: records.length,
      applied,
      failures: result.failures.length,
      events: result.events,
      lastSequenceNumber: shard.lastSequenceNumber,
      checkpointed,
      lagSeconds: this.lagSeconds,
      durationMs: performance.now() - started,
    });
  }

  private async iteratorFor(shard: ShardState): Promise<string> {
    const position: Position = shard.retryFrom
      ? { type: 'AT_SEQUENCE_NUMBER', sequenceNumber: shard.retryFrom }
      : shard.lastSequenceNumber
        ? { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: shard.lastSequenceNumber }
        : shard.start;
    const { ShardIterator } = await this.options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: this.arn,
        ShardId: shard.info.shardId,
        ShardIteratorType: position.type,
        SequenceNumber: 'sequenceNumber' in position ? position.sequenceNumber : undefined,
      }),
    );
    if (!ShardIterator) throw new Error(`no shard iterator for ${shard.info.shardId}`);
    return ShardIterator;
  }

  /** The shard is closed and read to its end: record it, and look for its children now. */
  private async finish(shard: ShardState): Promise<void> {
    shard.finished = true;
    shard.iterator = undefined;
    shard.checkpointDue = true;
    this.nextRefreshAt = 0;
    await this.saveCheckpoint(shard);
  }

  /** A checkpoint that could not be written holds nothing up: events keep flowing, a crash replays more. */
  private async retryCheckpoint(shard: ShardState): Promise<void> {
    try {
      await this.saveCheckpoint(shard);
    } catch (error) {
      this.log.warn({ err: error, shardId: shard.info.shardId }, 'stream checkpoint still not saved; will retry');
    }
  }

  private async saveCheckpoint(shard: ShardState): Promise<void> {
    const checkpoint: ShardCheckpoint = {
      shardId: shard.info.shardId,
      sequenceNumber: shard.lastSequenceNumber,
      finished: shard.finished,
    };
    await (this.store as CheckpointStore).save(checkpoint);
    shard.checkpointDue = false;
  }

  private onShardError(shard: ShardState, error: unknown): void {
    const shardId = shard.info.shardId;
    if (error instanceof ExpiredIteratorException) {
      // Iterators live 15 minutes: get a new one from the checkpoint, at once the first time.
      this.log.info({ shardId }, 'stream shard iterator expired; re-acquiring from the checkpoint');
      shard.iterator = undefined;
      if (shard.consecutiveErrors++ > 0) this.backOff(shard);
      return;
    }
    shard.consecutiveErrors++;
    if (error instanceof TrimmedDataAccessException) {
      // The checkpoint is older than the stream's retention: what lay between is gone.
      this.log.error(
        { shardId, sequenceNumber: shard.lastSequenceNumber },
        'stream records trimmed before they were read',
      );
      shard.iterator = undefined;
      shard.retryFrom = undefined;
      shard.lastSequenceNumber = undefined;
      shard.start = { type: 'TRIM_HORIZON' };
      return;
    }
    if (error instanceof ResourceNotFoundException) this.nextRefreshAt = 0; // the shard may have left the stream
    this.log.warn({ err: error, shardId, attempt: shard.consecutiveErrors }, 'stream shard read failed; backing off');
    this.backOff(shard);
  }

  private backOff(shard: ShardState): void {
    shard.retryAt = Date.now() + backoffDelay(Math.min(shard.consecutiveErrors, 16), this.backoff);
  }

  /**
   * Reads the shard list: new shards join (from their checkpoint, else from TRIM_HORIZON, or
   * LATEST on a brand-new LATEST consumer's first listing); shards trimmed from the stream leave.
   */
  private async refreshShards(checkpoints: Map<string, ShardCheckpoint> = new Map(), latest = false): Promise<void> {
    const listed = await listShards(this.options.streams, this.arn as string);
    const ids = new Set(listed.map((info) => info.shardId));
    for (const info of listed) {
      const known = this.shards.get(info.shardId);
      if (known) {
        known.info = info;
        continue;
      }
      const checkpoint = checkpoints.get(info.shardId);
      const skipHistory = latest && !checkpoint;
      this.shards.set(info.shardId, {
        info,
        iterator: undefined,
        start: { type: skipHistory ? 'LATEST' : 'TRIM_HORIZON' },
        retryFrom: undefined,
        lastSequenceNumber: checkpoint?.sequenceNumber,
        checkpointDue: false,
        // A closed shard has no "latest" records: skipping history skips it entirely.
        finished: (checkpoint?.finished ?? false) || (skipHistory && info.endingSequenceNumber !== undefined),
        consecutiveErrors: 0,
        retryAt: 0,
        newestRecordAt: undefined,
        caughtUp: false,
      });
    }
    const gone = [...this.shards.values()].filter((shard) => !ids.has(shard.info.shardId));
    for (const shard of gone) {
      if (!shard.finished)
        this.log.warn({ shardId: shard.info.shardId }, 'stream shard trimmed before it was read to its end');
      this.shards.delete(shard.info.shardId);
    }
    const stale = [...gone.map((shard) => shard.info.shardId), ...[...checkpoints.keys()].filter((id) => !ids.has(id))];
    if (stale.length > 0) await this.forget(stale);
    this.nextRefreshAt = Date.now() + this.shardRefreshMs;
  }

  private async forget(shardIds: string[]): Promise<void> {
    try {
      await (this.store as CheckpointStore).forget(shardIds);
    } catch (error) {
      this.log.warn({ err: error }, 'stale stream checkpoints not deleted');
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }
}

const isCheckpointRecord = (record: _Record): boolean => record.dynamodb?.Keys?.PK?.S === STREAM_CHECKPOINT_PK;
