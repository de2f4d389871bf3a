/**
 * An in-process consumer of the table's stream, for local and self-hosted use (on AWS the same
 * processing runs as a Lambda function: src/lambda/streams.ts).
 *
 * - Reads every shard of the stream (src/streams/shardSet.ts), a child shard only once its parent
 *   was read to its end (records of one item are in order only along a lineage).
 * - Resumes after a restart from its checkpoints (src/streams/checkpoints.ts):
 *   AFTER_SEQUENCE_NUMBER of the last processed record of each shard.
 * - Checkpoints after each processed batch, never before: delivery is at least once, and the
 *   processing (src/streams/processor.ts) is idempotent where it writes. The checkpoint is
 *   written behind the next page, in order (src/streams/checkpointWrites.ts).
 * - Reads a shard's next page while the page before it is still applied (two at most): the
 *   later page's events wait for the earlier one's, and when the earlier one fails a record the
 *   later one is abandoned and read again from that record (its soldCount writes, if done, are
 *   idempotent), so the events still go out in stream order and each page is applied in full.
 * - An expired iterator is re-acquired from the checkpoint; any other error backs that shard off
 *   (exponential, full jitter: src/streams/shardReader.ts) and the consumer keeps going.
 *
 * Where a brand-new consumer (no checkpoint at all) starts is `initialPosition`. The default is
 * TRIM_HORIZON, the oldest record still in the stream (24 hours on AWS): soldCount must count
 * every order, and replaying old records is harmless (sale markers). LATEST skips the history,
 * so orders placed before the first start would never be counted; it suits a consumer that only
 * feeds live subscriptions. (With LATEST, until a first record is checkpointed a restart starts
 * at LATEST again.) Shards that appear later, and shards without a checkpoint of a consumer that
 * has checkpoints, are always read from TRIM_HORIZON.
 *
 * Without `leases`, one process per `consumerName` and table: two consumers under one name would
 * overwrite each other's checkpoints. That is the in-process consumer of a server instance (own
 * name; DynamoDB Streams allows about two readers per shard). With `leases` (`npm run consumer`),
 * any number share one name: each shard is read by the holder of its lease
 * (src/streams/shardLeases.ts), which resumes from the shared checkpoint.
 */
import { EventEmitter } from 'node:events';
import type { _Record, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { RetryPolicy } from '../db/retry.js';
import type { Dynamo } from '../db/client.js';
import { CheckpointStore } from './checkpoints.js';
import { LeaseLostError, LeaseStore } from './leases.js';
import type { Fence, Tenure } from './leases.js';
import { ShardLeases } from './shardLeases.js';
import { waitForEmit } from './consumerEvents.js';
import type { BatchReport, StreamConsumerEvents } from './consumerEvents.js';
import { processRecords } from './processor.js';
import { describeEvent } from '../events/changeEvent.js';
import type { ChangeEvent } from '../events/changeEvent.js';
import type { PublishChangeEvent, StreamLog } from './processor.js';
import type { ShardPage, ShardReader } from './shardReader.js';
import { ShardSet } from './shardSet.js';
import { CheckpointWrites } from './checkpointWrites.js';
import { findStreamArn } from './shards.js';
import { DEFAULT_STREAM_POLL_MS } from '../config/index.js';

export type { BatchReport, RoundReport, StreamConsumerEvents } from './consumerEvents.js';

/** New shards appear when DynamoDB splits or rolls one over: looked for this often. */
const SHARD_REFRESH_MS = 10_000;
/** GetRecords returns at most this many records per call. */
const MAX_BATCH_SIZE = 1000;
/** After a failed read: retried soon, then no more than every 5 s while DynamoDB keeps failing. */
const ERROR_BACKOFF = { baseDelayMs: 100, maxDelayMs: 5000 };

export interface StreamConsumerOptions {
  /** The table's clients: DescribeTable, the processing's writes and the checkpoints. */
  dynamo: Dynamo;
  /** See createStreamsClient (src/streams/streamsClient.ts). Not destroyed by stop(). */
  streams: DynamoDBStreamsClient;
  tableName: string;
  publish?: PublishChangeEvent | undefined;
  /** Names this consumer's checkpoints; default `default`. */
  consumerName?: string | undefined;
  /** Where a consumer without any checkpoint starts; default TRIM_HORIZON (see above). */
  initialPosition?: 'TRIM_HORIZON' | 'LATEST' | undefined;
  /** Pause between polls while every shard is idle; default: STREAM_POLL_MS's. */
  pollIntervalMs?: number | undefined;
  /** How often the shard list is read again (also after any shard ends); default SHARD_REFRESH_MS. */
  shardRefreshMs?: number | undefined;
  /** GetRecords Limit; default GetRecords' maximum (MAX_BATCH_SIZE). */
  batchSize?: number | undefined;
  /** Backoff after an error, per shard; attempts never run out. Default ERROR_BACKOFF. */
  backoff?: { baseDelayMs: number; maxDelayMs: number } | undefined;
  log?: StreamLog | undefined;
  /**
   * Share the shards with other consumers of the same `consumerName` through leases
   * (src/streams/leases.ts): each shard is read by the one consumer holding its lease, which
   * resumes from the shared checkpoint. Without it this consumer reads every shard alone.
   */
  leases?: { owner: string; ttlMs: number } | undefined;
  /**
   * Called with each batch of records as read, before they are processed (the response cache
   * evicts what they change); a throw is logged and ignored.
   */
  onRecords?: ((records: readonly _Record[]) => void) | undefined;
  /** Called after each batch with records (metrics, tests); a throw is logged and ignored. */
  onBatch?: ((batch: BatchReport) => void) | undefined;
}

type PollOutcome = 'records' | 'empty' | 'error' | 'waiting';

/** A page's events held back because the page before it failed a record: the page is read again. */
class PageAbandonedError extends Error {
  constructor() {
    super('the page before this one did not complete; this one is read again');
    this.name = 'PageAbandonedError';
  }
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
  /** Each shard's page under way: done once it is processed or abandoned (see poll). */
  private readonly applying = new Map<ShardReader, Promise<void>>();
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
      const { owner, ttlMs } = this.options.leases;
      const leaseStore = new LeaseStore({ doc: dynamo.doc, tableName, consumerName: this.consumerName, owner, ttlMs });
      const leases = new ShardLeases(leaseStore, ttlMs, this.log, () => this.wake?.());
      this.leases = leases;
      this.leaseStore = leaseStore;
      await leases.maintain(shards.values());
      leases.start(() => shards.values());
    }
    this.log.info({ streamArn: arn, shards: shards.size, resumed: !fresh }, 'stream consumer started');
    this.loop = this.run(shards);
  }

  /** Stops polling once the current batch is processed and checkpointed, then gives up its leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    this.loop = undefined;
    await Promise.all(this.applying.values());
    await this.checkpoints.settled();
    await this.leases?.stop();
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
        const polled = await Promise.all(mine.map((shard) => this.poll(shard)));
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
   * Reads `shard`'s next page and sets it going, while the page before it may still be applied:
   * at most two pages of a shard are under way, the later one's events held until the earlier
   * one's are out (handleBatch). Returns once this page is under way and the one before it is
   * done, or once this poll is over (an empty page, an error). Never throws.
   */
  private async poll(shard: ShardReader): Promise<PollOutcome> {
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
    const started = performance.now();
    let outcome: PollOutcome = 'error';
    let reading = true;
    try {
      const held = await this.fenced(shard, async (fence) => {
        const page = await shard.read();
        reading = false;
        if (page.records.length === 0 && before) {
          // Nothing new yet while a page is applied: look again after the poll interval, or as
          // soon as that page is done.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.pollIntervalMs);
            void before.then(() => {
              clearTimeout(timer);
              resolve();
            });
          });
          outcome = 'records';
          return;
        }
        if (page.records.length === 0) {
          // Caught up: the checkpoint is written (again, if a write failed) before saying so.
          if (shard.checkpointDue) this.checkpoints.later(shard, fence);
          await this.checkpoints.settled(shard);
          if (page.next === undefined) await this.finish(shard, fence);
          outcome = 'empty';
          return;
        }
        const applied = this.handleBatch(shard, page, before, started, Date.now(), fence);
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
      if (shard.recover(error)) this.nextRefreshAt = 0; // the shard may have left the stream
      return 'error';
    }
  }

  /**
   * Processes a page (soldCount under the fence), publishing each event as soon as its record
   * and every earlier one are applied (processor.ts) and the page before it is done, then has
   * it checkpointed (under the fence, behind the next page: checkpointWrites.ts). A page whose
   * predecessor failed a record is abandoned: nothing of it is published or recorded.
   * Events cannot be fenced by DynamoDB: on leases they go out only once a consistent read,
   * begun as the page's processing begins, has found the tenure current (a record's own soldCount
   * write is fenced too, later still); a holder stalled between that read and a publish can
   * still publish events twice, which every API instance drops by `seq`. Throws LeaseLostError
   * when fenced off.
   */
  private async handleBatch(
    shard: ShardReader,
    { records, next, generation }: ShardPage,
    before: Promise<void> | undefined,
    started: number,
    readAt: number,
    fence: Fence | undefined,
  ): Promise<void> {
    const { dynamo, tableName, onRecords } = this.options;
    // Whether this page follows on from what was processed once the page before it is done:
    // not when that one failed a record or was abandoned (reading went back to before this page).
    const follows = (async () => {
      await before;
      return shard.current(generation);
    })();
    try {
      onRecords?.(records);
    } catch (error) {
      this.log.warn({ err: error }, 'stream consumer onRecords hook failed');
    }
    // On leases, the tenure's check runs alongside the processing; every publish waits for it.
    let checkedAt: number | undefined;
    const leaseStore = this.leaseStore;
    const current =
      fence && leaseStore
        ? leaseStore.isCurrent(fence.tenure).then((held) => {
            checkedAt = Date.now();
            return held;
          })
        : undefined;
    // A check that failed with no event waiting for it is nobody's error.
    void current?.catch(() => undefined);
    // When each event went out: how long a change waits between its page's read and its publish.
    const publishedAt: number[] = [];
    const given = this.options.publish;
    const publish: PublishChangeEvent | undefined =
      given &&
      (async (event) => {
        if (!(await follows)) throw new PageAbandonedError();
        if (fence && current && !(await current)) throw new LeaseLostError(fence.tenure);
        await given(event);
        publishedAt.push(Date.now());
      });
    const result = await processRecords(records, {
      doc: dynamo.doc,
      tableName,
      publish,
      log: this.log,
      fence,
    });
    const processedAt = Date.now();
    const lost = result.failures.find((failure) => failure.error instanceof LeaseLostError);
    if (lost) throw lost.error;
    if (!(await follows)) {
      // Its soldCount writes may be done (they are idempotent); it is read and processed again.
      this.log.debug({ shardId: shard.info.shardId, records: records.length }, 'stream page abandoned: read again');
      return;
    }
    const failure = result.failures[0];
    const applied = failure ? failure.index : records.length;
    if (failure) {
      this.log.warn(
        { err: failure.error, shardId: shard.info.shardId, sequenceNumber: failure.sequenceNumber },
        'stream record failed; retrying from it',
      );
    }
    shard.processed(records, applied, failure?.sequenceNumber);
    if (result.events.length > 0) {
      this.log.debug(
        {
          shardId: shard.info.shardId,
          records: records.length,
          readAt,
          processedAt,
          checkedAt,
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
      lagSeconds: this.lagSeconds,
      durationMs: performance.now() - started,
    };
    if (!failure && next === undefined) {
      let checkpointed = false;
      try {
        await this.finish(shard, fence);
        checkpointed = true;
      } catch (error) {
        if (error instanceof LeaseLostError) throw error;
        this.log.warn({ err: error, shardId: shard.info.shardId }, 'stream checkpoint not saved; will retry');
      }
      this.emit('batch', { ...report, checkpointed });
      return;
    }
    this.checkpoints.later(shard, fence, report);
  }

  /** The shard is closed and read to its end: record it, and look for its children now. */
  private async finish(shard: ShardReader, fence: Fence | undefined): Promise<void> {
    this.nextRefreshAt = 0;
    await this.checkpoints.settled(shard); // the checkpoints before it first
    await shard.finish(fence);
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
