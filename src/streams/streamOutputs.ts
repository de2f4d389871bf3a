/**
 * What stream records turn into outside the table, written once for the three readers of the
 * stream: the server's in-process consumer (src/runtimeConsumer.ts), `npm run consumer`
 * (src/consumer/main.ts) and the stream Lambda (src/lambda/streams.ts). Each reader says where
 * the outputs go; what they are, and in which order, is decided here:
 *
 * 1. before a batch is processed, its **dependency tags** (changedTags.ts) go to the response
 *    caches (this process's, or every instance's over Redis) and the public ones to the **CDN
 *    purge** hook, so no answer outlives the change by more than the trip;
 * 2. while it is processed (src/streams/processor.ts), each **change event** goes to the event bus,
 *    once the tags of the batches read so far are out (sent or failed): a client that refetches
 *    on an event is answered after its instance evicted what the change touched, although the
 *    tags wait for the shared tier's bump (redisInvalidations.ts) and an event may be ready first;
 * 3. after it, or after a round that found every shard drained, a **heartbeat**: proof that
 *    changes reach the caches now. It names the reader's lease tenures (consumers) and the
 *    newest feed probe the batch held (any reader; see feedProbe.ts): a stream Lambda has no
 *    lease and is not invoked while the stream is idle, so the instances write a probe when
 *    their feed falls silent, and the Lambda's heartbeat for it proves the whole path live.
 *    A heartbeat follows the tags sent before it; when one of those could not be sent, it is
 *    not sent, and on Redis the reader's next message on that channel tells every instance to
 *    flush (src/events/invalidationBus.ts: another reader's heartbeats may keep their feeds
 *    live meanwhile, so silence alone does not show the loss).
 *
 * `settle()` waits for all of it (the Lambda, before it returns: a frozen function sends nothing).
 */
import { changedTagsOf } from './changedTags.js';
import type { ChangedTags } from './changedTags.js';
import { newestProbeIn } from './feedProbe.js';
import type { ChangeRecord, PublishChangeEvent } from './processor.js';

/** A shard tenure a heartbeat names (src/streams/leases.ts): checked against the lease table. */
export interface NamedTenure {
  shardId: string;
  epoch: number;
}

/** A reader's proof that changes flow: its tenures (none without leases) and the newest probe it read. */
export interface LiveProof {
  tenures: readonly NamedTenure[];
  probe?: number | undefined;
}

/** Where a reader's invalidations and heartbeats go (the response cache of this process, or Redis). */
export interface InvalidationOutput {
  /** Sends a batch's tags; resolves whether they went out. */
  tags(changed: ChangedTags): boolean | Promise<boolean>;
  beat(proof: LiveProof): void | Promise<unknown>;
}

/** The CDN purge hook (src/streams/cdnPurge.ts's CdnPurger). */
export interface PurgeOutput {
  purge(tags: readonly string[]): void;
  /** Waits for what was queued (the Lambda). */
  drain?(): Promise<void>;
}

export interface StreamOutputsOptions {
  /** Where change events go (the event bus). */
  publish: PublishChangeEvent;
  invalidations?: InvalidationOutput | undefined;
  purge?: PurgeOutput | undefined;
}

/** What a consumer tells its outputs about (src/streams/consumer.ts's events). */
interface Watched {
  readonly tenures: readonly NamedTenure[];
  on(event: 'batch', listener: () => void): unknown;
  on(event: 'round', listener: (round: { caughtUp: boolean }) => void): unknown;
}

/** Whether `send` went out; a throw is a no. */
function sending(send: () => boolean | Promise<boolean>): Promise<boolean> {
  try {
    return Promise.resolve(send()).catch(() => false);
  } catch {
    return Promise.resolve(false);
  }
}

export class StreamOutputs {
  /** The newest probe read since the last heartbeat. */
  private probe: number | undefined;
  /** Whether the tags sent since the last heartbeat went out (a heartbeat vouches for them). */
  private tagsSent: Promise<boolean>[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  /** While tags of a batch are on their way: settles once every batch's tags sent so far are out. */
  private tagsOut: Promise<boolean> | undefined;
  /** Where each change event goes: to the event bus, after the tags sent before it. */
  readonly publish: PublishChangeEvent;

  constructor(private readonly options: StreamOutputsOptions) {
    this.publish = (event) => {
      const out = this.tagsOut;
      return out ? out.then(() => options.publish(event)) : options.publish(event);
    };
  }

  /** A batch read, before it is processed: its tags out, its probe remembered. */
  changed(records: readonly ChangeRecord[]): void {
    const { invalidations, purge } = this.options;
    if (!invalidations && !purge) return;
    const probe = newestProbeIn(records);
    if (probe !== undefined && (this.probe === undefined || probe > this.probe)) this.probe = probe;
    const changed = changedTagsOf(records);
    if (changed.tags.length === 0) return;
    if (invalidations) {
      const sent = this.track(sending(() => invalidations.tags(changed)));
      this.tagsSent.push(sent);
      // Events wait for these tags and for any earlier ones still on their way (one may be slower).
      const before = this.tagsOut;
      const out = before ? Promise.all([before, sent]).then(() => true) : sent;
      this.tagsOut = out;
      void out.then(() => {
        if (this.tagsOut === out) this.tagsOut = undefined;
      });
    }
    purge?.purge(changed.tags);
  }

  /** Changes flow: a heartbeat naming `tenures` and the newest probe read since the last one. */
  alive(tenures: readonly NamedTenure[] = []): void {
    const { invalidations } = this.options;
    if (!invalidations) return;
    const probe = this.probe;
    const vouched = this.tagsSent;
    this.probe = undefined;
    this.tagsSent = [];
    void this.track(
      (async () => {
        if ((await Promise.all(vouched)).every(Boolean)) await invalidations.beat({ tenures, probe });
      })(),
    );
  }

  /** Beats for `consumer` from now on: after each batch, and each round that found every shard drained. */
  watch(consumer: Watched): void {
    consumer.on('batch', () => this.alive(consumer.tenures));
    consumer.on('round', (round) => round.caughtUp && this.alive(consumer.tenures));
  }

  /** Resolves once every tag, heartbeat and purge sent so far is done. */
  async settle(): Promise<void> {
    await Promise.all([...this.pending]);
    await this.options.purge?.drain?.();
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work)).catch(() => undefined);
    return work;
  }
}
