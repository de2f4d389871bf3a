/**
 * An in-process consumer of the table's stream, for local and self-hosted use (on AWS the same
 * processing runs as a Lambda function: src/lambda/streams.ts).
 *
 * - Reads every shard of the stream (src/streams/shardSet.ts), a child shard only once its parent
 *   was read to its end (records of one item are in order only along a lineage).
 * - Resumes after a restart from its checkpoints (src/streams/checkpoints.ts):
 *   AFTER_SEQUENCE_NUMBER of the last processed record of each shard. Where a consumer without
 *   any checkpoint starts: `initialPosition` (src/streams/consumerOptions.ts).
 * - Checkpoints after each processed batch, never before: delivery is at least once, and the
 *   processing (src/streams/processor.ts) is idempotent where it writes. A shard's pages are
 *   read, applied, published and checkpointed by src/streams/shardPages.ts, the next page while
 *   the one before it is still applied (two at most), the checkpoint behind the next page.
 * - An expired iterator is re-acquired from the checkpoint; any other error backs that shard off
 *   (exponential, full jitter: src/streams/shardReader.ts) and the consumer keeps going.
 *
 * Without `leases`, one process per `consumerName` and table: two consumers under one name would
 * overwrite each other's checkpoints. That is the in-process consumer of a server instance (own
 * name; DynamoDB Streams allows about two readers per shard). With `leases` (`npm run consumer`),
 * any number share one name: each shard is read by the holder of its lease
 * (src/streams/shardLeases.ts), which resumes from the shared checkpoint.
 */
import { EventEmitter } from 'node:events';
import type { RetryPolicy } from '../db/retry.js';
import { CheckpointStore } from './checkpoints.js';
import { LeaseLostError, LeaseStore } from './leases.js';
import type { Fence, Tenure } from './leases.js';
import { ShardLeases } from './shardLeases.js';
import { waitForEmit } from './consumerEvents.js';
import type { BatchReport, StreamConsumerEvents } from './consumerEvents.js';
import type { ChangeEvent } from '../events/changeEvent.js';
import type { StreamLog } from './processor.js';
import type { ShardReader } from './shardReader.js';
import { ShardSet } from './shardSet.js';
import { CheckpointWrites } from './checkpointWrites.js';
import { ShardPages } from './shardPages.js';
import { findStreamArn } from './shards.js';
import { settledWithin } from '../settledWithin.js';
import { DEFAULT_STREAM_POLL_MS } from '../config/index.js';
import { ERROR_BACKOFF, MAX_BATCH_SIZE, SHARD_REFRESH_MS } from './consumerOptions.js';
import type { StreamConsumerOptions } from './consumerOptions.js';

export type { BatchReport, RoundReport, StreamConsumerEvents } from './consumerEvents.js';
export type { StreamConsumerOptions } from './consumerOptions.js';

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
  private readonly backoff: RetryPolicy;
  private shards: ShardSet | undefined;
  private store: CheckpointStore | undefined;
  private leases: ShardLeases | undefined;
  private leaseStore: LeaseStore | undefined;
  private arn: string | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private nextRefreshAt = 0;
  private rounds = 0;
  /** Each shard's checkpoint writes, behind its pages (checkpointWrites.ts). */
  private readonly checkpoints: CheckpointWrites;
  /** Each shard's pages: read, applied, published and checkpointed (shardPages.ts). */
  private readonly pages: ShardPages;
  /** The tenures found fenced off (see lost). */
  private readonly fencedOff = new Set<string>();

  constructor(options: StreamConsumerOptions) {
    super();
    this.options = options;
    this.log = options.log ?? noLog;
    this.checkpoints = new CheckpointWrites({
      log: this.log,
      report: (batch) => this.emit('batch', batch),
      fencedOff: (tenure) => this.lost(tenure),
    });
    this.consumerName = options.consumerName ?? 'default';
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_STREAM_POLL_MS;
    this.pages = new ShardPages({
      dynamo: options.dynamo,
      tableName: options.tableName,
      publish: options.publish,
      onRecords: options.onRecords,
      log: this.log,
      pollIntervalMs: this.pollIntervalMs,
      checkpoints: this.checkpoints,
      fenced: (shard, work) => this.fenced(shard, work),
      leaseStore: () => this.leaseStore,
      lagSeconds: () => this.lagSeconds,
      report: (batch) => this.emit('batch', batch),
      refreshSoon: () => (this.nextRefreshAt = 0),
    });
    this.shardRefreshMs = options.shardRefreshMs ?? SHARD_REFRESH_MS;
    this.backoff = { maxAttempts: Infinity, ...(options.backoff ?? ERROR_BACKOFF) };
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
    const { streams } = this.options;
    const batchSize = this.options.batchSize ?? MAX_BATCH_SIZE;
    const shards = new ShardSet({ streams, streamArn: arn, store, batchSize, backoff: this.backoff, log: this.log });
    this.shards = shards;
    this.stopping = false;
    this.rounds = 0;
    const fresh = checkpoints.size === 0;
    const latest = fresh && this.options.initialPosition === 'LATEST';
    await this.refreshShards(shards, checkpoints, latest ? 'LATEST' : 'TRIM_HORIZON');
    if (otherStreams.length > 0) await shards.forget(otherStreams);
    if (this.options.leases) {
      const { owner, ttlMs, dynamo: leaseDynamo = dynamo } = this.options.leases;
      const leaseStore = new LeaseStore({
        doc: leaseDynamo.doc,
        tableName,
        consumerName: this.consumerName,
        owner,
        ttlMs,
      });
      const leases = new ShardLeases(leaseStore, ttlMs, this.log, () => this.wake?.());
      this.leases = leases;
      this.leaseStore = leaseStore;
      await leases.maintain(shards.values());
      leases.start(() => shards.values());
    }
    this.log.info({ streamArn: arn, shards: shards.size, resumed: !fresh }, 'stream consumer started');
    this.loop = this.run(shards);
  }

  /**
   * Stops polling once the current batch is processed and checkpointed, then gives up its
   * leases. On leases the batch is waited for at most one renewal period before the leases are
   * released: a page held up by a slow or throttled write must not hold the shards up. What it
   * writes after that is refused by the fence, and its successor reads it again from the
   * checkpoint (soldCount's writes are idempotent, and a repeated event is dropped by its `seq`),
   * as after a crash. It resolves once that batch is over too.
   */
  async stop(): Promise<void> {
    const at = Date.now();
    this.stopping = true;
    this.wake?.();
    const steps = { readingMs: -1, pagesMs: -1, checkpointsMs: -1 };
    const drained = (async () => {
      await this.loop;
      steps.readingMs = Date.now() - at;
      await this.pages.settled();
      steps.pagesMs = Date.now() - at;
      await this.checkpoints.settled();
      steps.checkpointsMs = Date.now() - at;
    })();
    const leases = this.leases;
    const inTime = leases ? await settledWithin(drained, leases.periodMs) : true;
    const releasedMs = Date.now() - at;
    await leases?.stop();
    await drained;
    this.loop = undefined;
    // When each step of the stop was over and the release began, from its start: what a hand-over waited for.
    this.log.info({ at, ...steps, drainedInTime: inTime, releasedMs, ms: Date.now() - at }, 'stream consumer stopped');
  }

  /** Shards whose lease this consumer holds now (undefined without leases). */
  get leasesHeld(): number | undefined {
    return this.leases?.count;
  }

  /** The tenures it reads under now (empty without leases): its heartbeats name them. */
  get tenures(): Tenure[] {
    const leases = this.leases;
    if (!leases) return [];
    return leases.shardIds.flatMap((shardId) => leases.tenure(shardId) ?? []);
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
    return this.shards?.lagSeconds(Date.now()) ?? 0;
  }

  /** Resolves with the first batch from now on that satisfies `predicate`. */
  waitForBatch(predicate: (batch: BatchReport) => boolean, timeoutMs = 10_000): Promise<BatchReport> {
    return waitForEmit(this, 'batch', predicate, timeoutMs, 'a matching stream batch');
  }

  /** Resolves with the first event published from now on that satisfies `predicate`. */
  async waitForEvent(predicate: (event: ChangeEvent) => boolean, timeoutMs = 10_000): Promise<ChangeEvent> {
    const batch = await waitForEmit(
      this,
      'batch',
      (b) => b.events.some(predicate),
      timeoutMs,
      'a matching change event',
    );
    return batch.events.find(predicate) as ChangeEvent;
  }

  /**
   * Resolves after a complete round, begun after this call, in which every readable shard had
   * nothing new: everything written before the call has been processed. (On AWS an empty
   * GetRecords page does not prove a shard is drained; this is meant for DynamoDB Local.)
   */
  async waitUntilCaughtUp(timeoutMs = 10_000): Promise<void> {
    const current = this.rounds; // the round under way, if any, may have polled before the call
    await waitForEmit(
      this,
      'round',
      (report) => report.caughtUp && report.round > current,
      timeoutMs,
      'the stream to be drained',
    );
  }

  private async run(shards: ShardSet): Promise<void> {
    while (!this.stopping) {
      const round = ++this.rounds;
      let busy = false;
      let caughtUp = false;
      try {
        if (Date.now() >= this.nextRefreshAt) await this.refreshShards(shards);
        if (this.leases && this.store) await this.leases.restartTaken(shards, this.store);
        for (const shard of shards.values()) {
          // A shard that ended while its checkpoint could not be written is never polled again.
          if (shard.finished && shard.checkpointDue) await this.fenced(shard, (fence) => shard.retryCheckpoint(fence));
        }
        const mine = shards.ready().filter((shard) => this.leases?.holds(shard.info.shardId) ?? true);
        const polled = await Promise.all(mine.map((shard) => this.pages.poll(shard)));
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

  /**
   * Runs `work` under the fence of `shard`'s lease (no fence without leases). Not ours any more:
   * nothing runs. Fenced off: the shard is dropped at once, and false returned.
   */
  private async fenced(shard: ShardReader, work: (fence: Fence | undefined) => Promise<void>): Promise<boolean> {
    if (!this.leases || !this.leaseStore) {
      await work(undefined);
      return true;
    }
    const tenure = this.leases.tenure(shard.info.shardId);
    if (!tenure) return false;
    try {
      await work(this.leaseStore.fence(tenure));
      return true;
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      this.lost(tenure);
      return false;
    }
  }

  /**
   * A write under `tenure` was fenced off: the shard is dropped at once. Said once per tenure
   * (a page's writes and the checkpoint behind it can both be refused).
   */
  private lost(tenure: Tenure): void {
    this.leases?.drop(tenure);
    const key = `${tenure.shardId}#${tenure.epoch}`;
    if (this.fencedOff.has(key)) return;
    this.fencedOff.add(key);
    this.emit('fenced', { shardId: tenure.shardId, epoch: tenure.epoch });
  }

  /**
   * Reads the shard list again (ShardSet.refresh) and schedules the next reading. With leases,
   * the shards other consumers read are refreshed from the checkpoints too: a child shard may
   * be read once its parent is finished, whoever finished it.
   */
  private async refreshShards(shards: ShardSet, ...args: Parameters<ShardSet['refresh']>): Promise<void> {
    await shards.refresh(...args);
    if (this.leases && this.store && args.length === 0) await this.leases.refreshOthers(shards, this.store);
    this.nextRefreshAt = Date.now() + this.shardRefreshMs;
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
