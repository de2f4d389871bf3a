/**
 * The response cache's invalidations between processes, on channels of their own of the
 * process's RedisChannels, apart from the change events: stream readers (and the instance that
 * ran a mutation) publish the dependency tags a change touched; every API instance evicts them.
 * Stream readers also publish heartbeats, naming the lease tenures they read under (consumers)
 * or the feed probe they read (any reader): an instance serves from its cache only while
 * heartbeats it can confirm arrive (src/pipeline/responseCache/redisFeed.ts).
 *
 * The invalidations are spread over INVALIDATION_PARTITIONS channels (invalidationPartitions.ts:
 * a tag travels on the one its hash picks; in a cluster each is on a primary of its own). A
 * heartbeat goes out on every one of them, after the tags it vouches for on that channel: it
 * vouches only for what came before it on its own channel, so each event a listener hears names
 * its partition, and the feed is live only while every partition beats.
 *
 * Every message is a signed envelope (signedEnvelope.ts) holding a body of
 * invalidationMessages.ts, signed for its table and partition (the purpose names both: a message
 * captured on one channel is forged on any other) and numbered per partition. On receipt:
 * - an envelope that fails with a signing secret set (unsigned, forged) is refused and counted:
 *   it is not from a holder of the secret, so no invalidation of theirs is lost; a publisher with
 *   the wrong secret cannot beat either, and the instances bypass;
 * - one too old, dated before this subscription, or replayed is refused and counted: the
 *   window is longer than the feed timeout, and a new subscription flushes at its first beat,
 *   so what is refused for its age always falls in a gap the cache already treats as one;
 * - a message that cannot be decoded (any, without a secret; one with a valid signature, with
 *   one) is counted and handed on as a gap of its partition: the instance bypasses until that
 *   partition's next heartbeat, which flushes;
 * - a publisher's number that skips one on a partition (a message of it lost between Redis and
 *   this subscription, or one it failed to send) is a gap of that partition too, counted as
 *   `sequence-gap`; the message itself is then acted on.
 * A publisher that could not send a message on a partition says so before its next one there
 * (LOST_BODY: everything invalidated), since neither a number skipped nor its silence shows
 * every loss to every receiver.
 * Whoever can publish on the channels without the secret can evict entries (without one), never
 * plant one.
 */
import type { Logger } from 'pino';
import { settledWithin } from '../settledWithin.js';
import {
  heartbeatBody,
  MAX_INVALIDATION_MESSAGE_BYTES,
  parseInvalidation,
  tagsBodies,
} from './invalidationMessages.js';
import type { Heartbeat, Invalidation, InvalidationMessage } from './invalidationMessages.js';
import { byPartition, invalidationChannels, isEmpty } from './invalidationPartitions.js';
import type { RedisChannels } from './redisChannels.js';
import { SignedChannel } from './signedChannel.js';
import type { SignedMessage } from './signedChannel.js';
import { processIdentity, RefusalCounter, Sealer } from './signedEnvelope.js';
import type { Refusal } from './signedEnvelope.js';

/**
 * What a partition's messages are signed for: its table and its number, so a message captured on
 * one channel is forged on any other, of this table or of another that shares the secret (a
 * staging table's heartbeats relayed onto production's channels would otherwise keep its feed
 * live while its own readers are down).
 */
export const invalidationPurpose = (tableName: string, partition: number): string =>
  `invalidation:${tableName}:${partition}`;

/**
 * How long an invalidation waits for its publisher's bump before it goes out saying it was not
 * bumped (every receiver then bumps it): the bump's own bound is the feed's timeout, and an
 * instance's memory must not keep a changed answer that long for a slow Redis.
 */
export const BUMP_WAIT_MS = 1000;

/** Whether `bumped` (a publisher's bump) resolved true within BUMP_WAIT_MS. Never rejects. */
async function bumpDone(bumped: boolean | Promise<boolean> | undefined): Promise<boolean> {
  if (typeof bumped !== 'object') return bumped === true;
  const outcome = bumped.catch(() => false);
  return (await settledWithin(outcome, BUMP_WAIT_MS)) && (await outcome);
}

/**
 * What a publisher sends on a partition before its next message there once one of its messages
 * could not be sent (Redis down, its connection cut, a publish that failed): everything is
 * invalidated, so every instance flushes and serves nothing read before. A number skipped shows
 * a loss only to a receiver that heard the number before it; a message never sealed (the
 * connection was down) skips none; and another reader's heartbeats keep the feed live
 * meanwhile: without this, the loss went unnoticed until the maximum age. Any receiver, of any
 * version, flushes on it.
 */
const LOST_BODY = JSON.stringify({ kind: 'tags', tags: [], everything: true, lost: true });

/** Publishers whose numbers a partition remembers at most (a flood of names forgets them all). */
const MAX_NUMBERED_PUBLISHERS = 10_000;

export interface InvalidationBusOptions {
  /** The process's pub/sub (the caller starts and closes it). */
  channels: RedisChannels;
  tableName: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** Listen to the channels (API instances); a stream reader that only publishes says false. */
  subscribe: boolean;
  /** This publisher's name (a consumer's lease owner: its heartbeats are checked against it). */
  from?: string | undefined;
  /** At most one warning about refused messages per this many ms. */
  warnIntervalMs?: number | undefined;
  /** The clock messages are dated and judged by (tests). */
  now?: (() => number) | undefined;
}

/**
 * A message for the cache, or word that messages may have been lost (a gap), each with the
 * partition it came on: a heartbeat vouches for that partition alone.
 */
export type InvalidationEvent = (InvalidationMessage | { kind: 'gap'; reason: string }) & { partition: number };
export type InvalidationListener = (event: InvalidationEvent) => void;

export class RedisInvalidationBus {
  private readonly partitions: SignedChannel[];
  /** The partitions' channel names, partition 0 first. */
  readonly names: readonly string[];
  /** This publisher's name, as its heartbeats carry it. */
  readonly from: string;
  /** Messages refused or undecodable on receipt, by reason (every partition's). */
  readonly refusals: RefusalCounter;
  private readonly listeners = new Set<InvalidationListener>();
  private readonly downListeners = new Set<(partition: number) => void>();
  private readonly stopListening: (() => void)[] = [];
  private closed = false;
  /** Messages that could not be published (Redis down or failing), logged once per interval. */
  private readonly losses: RefusalCounter;
  /** Published invalidations that widened a tag to its kind or to everything, logged once per interval. */
  private readonly widenings: RefusalCounter;
  /** Messages a batch was split into beyond the first of each partition. */
  splits = 0;
  /** Invalidations published without the bumped flag although their publisher bumps: it failed or was late. */
  readonly notBumped: RefusalCounter;
  /** Per partition: messages this publisher could not send there, and how many of those it has told of. */
  private readonly lossesOn: number[] = [];
  private readonly toldUpTo: number[] = [];
  /** Messages sent to tell every instance that a message before them was lost (each makes them flush). */
  lossesTold = 0;

  constructor(private readonly options: InvalidationBusOptions) {
    this.names = invalidationChannels(options.tableName);
    this.from = options.from ?? processIdentity();
    const secret = options.channels.settings.signingSecret;
    this.refusals = new RefusalCounter('invalidation messages on redis', options.log, options.warnIntervalMs);
    this.partitions = this.names.map(
      (name, partition) =>
        new SignedChannel({
          channels: options.channels,
          name,
          purpose: invalidationPurpose(options.tableName, partition),
          maxBytes: MAX_INVALIDATION_MESSAGE_BYTES,
          what: 'invalidation messages on redis',
          log: options.log,
          now: options.now,
          // Numbered per partition, so a receiver of one channel can tell when one of its messages is missing.
          shared: {
            sealer: new Sealer(invalidationPurpose(options.tableName, partition), secret, this.from),
            refusals: this.refusals,
          },
        }),
    );
    this.losses = new RefusalCounter('invalidation messages not published', options.log, options.warnIntervalMs);
    this.notBumped = new RefusalCounter(
      'publisher bumps of the shared cache tier (the instances bump instead)',
      options.log,
      options.warnIntervalMs,
    );
    this.widenings = new RefusalCounter(
      'invalidation tags outside the tag pattern (widened, not dropped)',
      options.log,
      options.warnIntervalMs,
    );
    if (options.subscribe) {
      for (const [partition, signed] of this.partitions.entries())
        this.stopListening.push(this.listen(signed, partition));
    }
  }

  /**
   * Publishes an invalidation, each tag on its partition, split into messages under the byte
   * bound. Never rejects: a message that cannot be sent is counted in `lost` and logged once
   * per interval, and this publisher's next message on its partition is preceded by word of
   * the loss (every instance flushes). Resolves true when every message was sent.
   */
  async publishTags(
    invalidation: Invalidation,
    {
      bumped,
      ...extra
    }: {
      changedAt?: number | undefined;
      traceparents?: readonly string[] | undefined;
      /**
       * The publisher's bump of `invalidation.tags` in the response cache's shared tier, sent
       * before this call: the messages wait for it (at most BUMP_WAIT_MS) and say whether it
       * was done. Without it, or false, late or failed, they say not, and receivers bump.
       */
      bumped?: boolean | Promise<boolean> | undefined;
    } = {},
  ): Promise<boolean> {
    if (invalidation.everything || invalidation.kinds.length > 0) {
      this.widenings.count(invalidation.everything ? 'everything' : 'kind', { kinds: invalidation.kinds });
    }
    const done = await bumpDone(bumped);
    if (bumped !== undefined && !done) this.notBumped.count('bump failed or late: every instance bumps');
    const sends = byPartition(invalidation).flatMap((part, partition) => {
      if (isEmpty(part)) return [];
      const bodies = tagsBodies(part, { ...extra, bumped: done });
      this.splits += bodies.length - 1;
      return bodies.map((body) => this.send(partition, body));
    });
    return (await Promise.all(sends)).every(Boolean);
  }

  /**
   * A stream reader's proof of life (see Heartbeat), on every partition: each goes out after
   * what was published before it on its channel. Resolves true when every one was sent.
   */
  async publishHeartbeat(heartbeat: Omit<Heartbeat, 'kind' | 'from'>): Promise<boolean> {
    const body = heartbeatBody(heartbeat);
    const sent = await Promise.all(this.partitions.map((_, partition) => this.send(partition, body)));
    return sent.every(Boolean);
  }

  /** Messages that could not be published. */
  get lost(): number {
    return this.losses.total;
  }

  /** Calls `listener` with each message (and each gap) from now on. */
  subscribe(listener: InvalidationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` whenever a partition's subscription closes (its messages may be lost until its next heartbeat). */
  onDown(listener: (partition: number) => void): void {
    this.downListeners.add(listener);
  }

  /** Stops listening; the connections are the caller's (RedisChannels). */
  close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.downListeners.clear();
    for (const stop of this.stopListening.splice(0)) stop();
    return Promise.resolve();
  }

  /**
   * Sends `body` on `partition`, after word that a message of this publisher was lost there if
   * one was since the last such word went out (held back, and counted lost, while that word
   * cannot be sent: a heartbeat must never vouch for a partition past a loss nobody was told of).
   */
  private async send(partition: number, body: string): Promise<boolean> {
    const lost = this.lossesOn[partition] ?? 0;
    if (lost > (this.toldUpTo[partition] ?? 0)) {
      if (!(await this.sendOne(partition, LOST_BODY))) {
        this.losses.count('held back: a loss before it not told yet', { channel: this.names[partition] });
        return false;
      }
      this.toldUpTo[partition] = Math.max(this.toldUpTo[partition] ?? 0, lost);
      this.lossesTold++;
    }
    return this.sendOne(partition, body);
  }

  private async sendOne(partition: number, body: string): Promise<boolean> {
    const signed = this.partitions[partition] as SignedChannel;
    const outcome = this.closed ? 'not-connected' : await signed.send(body);
    if (outcome === 'sent') return true;
    this.lossesOn[partition] = (this.lossesOn[partition] ?? 0) + 1;
    this.losses.count(outcome === 'failed' ? 'publish failed' : 'redis is not connected', { channel: signed.name });
    return false;
  }

  private listen(signed: SignedChannel, partition: number): () => void {
    /** Each publisher's last number heard on this partition since its subscription began. */
    const numbers = new Map<string, number>();
    return signed.listen({
      message: (message) => this.deliver(message, partition, numbers),
      refused: (reason) => this.refused(reason, partition),
      // A closed subscription has lost messages; the next one starts its numbers afresh.
      lost: () => {
        numbers.clear();
        for (const listener of this.downListeners) listener(partition);
      },
    });
  }

  private refused(reason: Refusal, partition: number): void {
    // Without a secret anyone's message is as good as a publisher's: one we cannot read may have been one.
    const unreadable = reason === 'malformed' || reason === 'too-large';
    if (!this.options.channels.settings.signingSecret && unreadable) this.emit({ kind: 'gap', reason, partition });
  }

  private deliver(opened: SignedMessage, partition: number, numbers: Map<string, number>): void {
    const channel = this.names[partition];
    const last = numbers.get(opened.from);
    if (last === undefined && numbers.size >= MAX_NUMBERED_PUBLISHERS) numbers.clear();
    numbers.set(opened.from, opened.seq);
    if (last !== undefined && opened.seq > last + 1) {
      this.refusals.count('sequence-gap', { channel, from: opened.from, missing: opened.seq - last - 1 });
      this.emit({ kind: 'gap', reason: 'sequence-gap', partition });
    }
    const { message, problem } = parseInvalidation(opened.body, opened.from);
    if (!message) {
      this.refusals.count('undecodable', { channel, problem });
      this.emit({ kind: 'gap', reason: `undecodable: ${problem}`, partition });
      return;
    }
    this.emit({ ...message, partition });
  }

  private emit(event: InvalidationEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.options.log.warn({ err: error }, 'invalidation listener failed');
      }
    }
  }
}
