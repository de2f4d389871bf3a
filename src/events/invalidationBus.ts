/**
 * The response cache's invalidations between processes, on a Redis pub/sub channel of their own
 * (`tablegraph:invalidations:<table>`), apart from the change events: stream consumers (and the
 * instance that ran a mutation) publish the dependency tags a change touched; every API
 * instance evicts them. Consumers also publish a heartbeat while they read the stream, naming
 * the lease tenures they read under: an instance serves from its cache only while heartbeats
 * that its lease table confirms arrive (src/pipeline/responseCache/).
 *
 * Every message is a signed envelope (signedEnvelope.ts) holding a body of
 * invalidationMessages.ts. On receipt:
 * - an envelope that fails with a signing secret set (unsigned, forged) is refused and counted:
 *   it is not from a holder of the secret, so no invalidation of theirs is lost; a publisher with
 *   the wrong secret cannot beat either, and the instances bypass;
 * - one too old, dated before this subscription, or replayed is refused and counted: the
 *   window is longer than the feed timeout, and a new subscription flushes at its first beat,
 *   so what is refused for its age always falls in a gap the cache already treats as one;
 * - a message that cannot be decoded (any, without a secret; one with a valid signature, with
 *   one) is counted and handed on as a gap: the instance bypasses until the next heartbeat, which
 *   flushes.
 * Whoever can publish on the channel without the secret can evict entries (without one), never
 * plant one.
 */
import type { Logger } from 'pino';
import {
  heartbeatBody,
  MAX_INVALIDATION_MESSAGE_BYTES,
  parseInvalidation,
  tagsBodies,
} from './invalidationMessages.js';
import type { Invalidation, InvalidationMessage } from './invalidationMessages.js';
import { closeAll, connectWithin, openRedis, redisChannel } from './redisConnection.js';
import type { RedisClient, RedisSettings } from './redisConnection.js';
import { Freshness, openEnvelope, RefusalCounter, Sealer } from './signedEnvelope.js';

export const invalidationsChannel = (tableName: string): string => redisChannel('invalidations', tableName);

const PURPOSE = 'invalidation';

export interface InvalidationBusOptions extends RedisSettings {
  tableName: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** Listen to the channel (API instances); a consumer that only publishes says false. */
  subscribe: boolean;
  /** This publisher's name (a consumer's lease owner: its heartbeats are checked against it). */
  from?: string | undefined;
  /** At most one warning about refused messages per this many ms. */
  warnIntervalMs?: number | undefined;
  /** The clock messages are dated and judged by (tests). */
  now?: (() => number) | undefined;
}

/** A message for the cache, or word that one could not be decoded (a gap: invalidations may be lost). */
export type InvalidationEvent = InvalidationMessage | { kind: 'gap'; reason: string };
export type InvalidationListener = (event: InvalidationEvent) => void;

export class RedisInvalidationBus {
  private readonly publisher: RedisClient;
  private readonly subscriber: RedisClient | undefined;
  readonly channel: string;
  private readonly sealer: Sealer;
  private readonly freshness: Freshness;
  private readonly now: () => number;
  private readonly listeners = new Set<InvalidationListener>();
  private readonly downListeners = new Set<() => void>();
  private closed = false;
  /** Messages refused or undecodable on receipt, by reason. */
  readonly refusals: RefusalCounter;
  /** Messages that could not be published (Redis down or failing), logged once per interval. */
  private readonly losses: RefusalCounter;
  /** Published invalidations that widened a tag to its kind or to everything, logged once per interval. */
  private readonly widenings: RefusalCounter;
  /** Messages a batch was split into beyond the first. */
  splits = 0;

  constructor(private readonly options: InvalidationBusOptions) {
    this.channel = invalidationsChannel(options.tableName);
    this.now = options.now ?? Date.now;
    this.sealer = new Sealer(PURPOSE, options.signingSecret, options.from);
    this.freshness = new Freshness({ now: this.now });
    this.refusals = new RefusalCounter('invalidation messages on redis', options.log, options.warnIntervalMs);
    this.losses = new RefusalCounter('invalidation messages not published', options.log, options.warnIntervalMs);
    this.widenings = new RefusalCounter(
      'invalidation tags outside the tag pattern (widened, not dropped)',
      options.log,
      options.warnIntervalMs,
    );
    this.publisher = openRedis(options, { role: 'invalidations-publisher', log: options.log });
    if (options.subscribe) {
      const subscriber = openRedis(options, { role: 'invalidations-subscriber', log: options.log, subscriber: true });
      // Resubscribe on every ready (see redisEventBus.ts); a closed connection has lost messages.
      subscriber.on('ready', () => void this.subscribeChannel());
      subscriber.on('close', () => {
        this.freshness.connectionLost();
        for (const listener of this.downListeners) listener();
      });
      subscriber.on('messageBuffer', (channel: Buffer, raw: Buffer) => this.deliver(channel.toString(), raw));
      this.subscriber = subscriber;
    }
  }

  /** Connects (and subscribes); resolves once connected or after `waitMs` (it keeps reconnecting). */
  async start(waitMs = 2000): Promise<void> {
    const listening = this.subscriber?.connect().then(() => this.subscribeChannel());
    await connectWithin(Promise.all([this.publisher.connect().catch(() => undefined), listening]), waitMs);
  }

  /**
   * Publishes an invalidation, split into messages under the byte bound. Never rejects: a
   * message that cannot be sent is counted in `lost` and logged once per interval (the
   * instances notice the silence: the same Redis carries the heartbeats).
   */
  async publishTags(
    invalidation: Invalidation,
    extra: { changedAt?: number | undefined; traceparents?: readonly string[] | undefined } = {},
  ): Promise<void> {
    if (invalidation.everything || invalidation.kinds.length > 0) {
      this.widenings.count(invalidation.everything ? 'everything' : 'kind', { kinds: invalidation.kinds });
    }
    const bodies = tagsBodies(invalidation, extra);
    this.splits += bodies.length - 1;
    await Promise.all(bodies.map((body) => this.send(body)));
  }

  /** A consumer's proof of life, naming tenures it reads under (checked against the lease table). */
  publishHeartbeat(group: string, tenures: readonly { shardId: string; epoch: number }[]): Promise<void> {
    return this.send(heartbeatBody(group, tenures));
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

  /** Calls `listener` whenever the subscription's connection closes (messages may be lost until the next heartbeat). */
  onDown(listener: () => void): void {
    this.downListeners.add(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.downListeners.clear();
    await closeAll([this.publisher, ...(this.subscriber ? [this.subscriber] : [])]);
  }

  private async send(body: string): Promise<void> {
    if (this.closed || this.publisher.status !== 'ready') {
      this.losses.count('redis is not connected', { channel: this.channel });
      return;
    }
    try {
      // Sealed right before PUBLISH: one connection keeps the numbers in order.
      await this.publisher.publish(this.channel, this.sealer.seal(body, this.now()));
    } catch {
      this.losses.count('publish failed', { channel: this.channel });
    }
  }

  private async subscribeChannel(): Promise<void> {
    if (!this.subscriber) return;
    this.freshness.subscribing(this.now());
    await this.subscriber.subscribe(this.channel).catch(() => undefined);
  }

  private deliver(channel: string, raw: Buffer): void {
    if (channel !== this.channel) return;
    const { signingSecret } = this.options;
    const opened = openEnvelope(raw, {
      purpose: PURPOSE,
      secret: signingSecret,
      maxBytes: MAX_INVALIDATION_MESSAGE_BYTES,
    });
    if (!opened.ok) {
      this.refusals.count(opened.reason, { channel });
      // Without a secret anyone's message is as good as a consumer's: one we cannot read may have been one.
      if (!signingSecret) this.emit({ kind: 'gap', reason: opened.reason });
      return;
    }
    const stale = this.freshness.check(opened.from, opened.seq, opened.at);
    if (stale) {
      this.refusals.count(stale, { channel, from: opened.from });
      return;
    }
    const { message, problem } = parseInvalidation(opened.body, opened.from);
    if (!message) {
      this.refusals.count('undecodable', { channel, problem });
      this.emit({ kind: 'gap', reason: `undecodable: ${problem}` });
      return;
    }
    this.emit(message);
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
