/**
 * The response cache's invalidations between processes, on a channel of their own of the
 * process's RedisChannels (`tablegraph:{<table>:invalidations}`), apart from the change events:
 * stream readers (and the instance that ran a mutation) publish the dependency tags a change
 * touched; every API instance evicts them. Stream readers also publish heartbeats, naming the
 * lease tenures they read under (consumers) or the feed probe they read (any reader): an
 * instance serves from its cache only while heartbeats it can confirm arrive
 * (src/pipeline/responseCache/redisFeed.ts).
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
import type { Heartbeat, Invalidation, InvalidationMessage } from './invalidationMessages.js';
import type { RedisChannels } from './redisChannels.js';
import { topicChannel } from './redisNames.js';
import { SignedChannel } from './signedChannel.js';
import type { SignedMessage } from './signedChannel.js';
import { RefusalCounter } from './signedEnvelope.js';
import type { Refusal } from './signedEnvelope.js';

export const invalidationsChannel = (tableName: string): string => topicChannel(tableName, 'invalidations');

const PURPOSE = 'invalidation';

export interface InvalidationBusOptions {
  /** The process's pub/sub (the caller starts and closes it). */
  channels: RedisChannels;
  tableName: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** Listen to the channel (API instances); a stream reader that only publishes says false. */
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
  private readonly signed: SignedChannel;
  readonly channel: string;
  private readonly listeners = new Set<InvalidationListener>();
  private readonly downListeners = new Set<() => void>();
  private readonly stopListening: (() => void) | undefined;
  private closed = false;
  /** Messages that could not be published (Redis down or failing), logged once per interval. */
  private readonly losses: RefusalCounter;
  /** Published invalidations that widened a tag to its kind or to everything, logged once per interval. */
  private readonly widenings: RefusalCounter;
  /** Messages a batch was split into beyond the first. */
  splits = 0;

  constructor(private readonly options: InvalidationBusOptions) {
    this.channel = invalidationsChannel(options.tableName);
    this.signed = new SignedChannel({
      channels: options.channels,
      name: this.channel,
      purpose: PURPOSE,
      maxBytes: MAX_INVALIDATION_MESSAGE_BYTES,
      what: 'invalidation messages on redis',
      log: options.log,
      from: options.from,
      warnIntervalMs: options.warnIntervalMs,
      now: options.now,
    });
    this.losses = new RefusalCounter('invalidation messages not published', options.log, options.warnIntervalMs);
    this.widenings = new RefusalCounter(
      'invalidation tags outside the tag pattern (widened, not dropped)',
      options.log,
      options.warnIntervalMs,
    );
    this.stopListening = options.subscribe
      ? this.signed.listen({
          message: (message) => this.deliver(message),
          refused: (reason) => this.refused(reason),
          // A closed subscription has lost messages.
          lost: () => {
            for (const listener of this.downListeners) listener();
          },
        })
      : undefined;
  }

  /** Messages refused or undecodable on receipt, by reason. */
  get refusals(): RefusalCounter {
    return this.signed.refusals;
  }

  /** This publisher's name, as its heartbeats carry it. */
  get from(): string {
    return this.signed.from;
  }

  /**
   * Publishes an invalidation, split into messages under the byte bound. Never rejects: a
   * message that cannot be sent is counted in `lost` and logged once per interval (the
   * instances notice the silence: the same Redis carries the heartbeats). Resolves true when
   * every message was sent.
   */
  async publishTags(
    invalidation: Invalidation,
    extra: { changedAt?: number | undefined; traceparents?: readonly string[] | undefined } = {},
  ): Promise<boolean> {
    if (invalidation.everything || invalidation.kinds.length > 0) {
      this.widenings.count(invalidation.everything ? 'everything' : 'kind', { kinds: invalidation.kinds });
    }
    const bodies = tagsBodies(invalidation, extra);
    this.splits += bodies.length - 1;
    const sent = await Promise.all(bodies.map((body) => this.send(body)));
    return sent.every(Boolean);
  }

  /** A stream reader's proof of life (see Heartbeat); resolves true when it was sent. */
  publishHeartbeat(heartbeat: Omit<Heartbeat, 'kind' | 'from'>): Promise<boolean> {
    return this.send(heartbeatBody(heartbeat));
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

  /** Stops listening; the connections are the caller's (RedisChannels). */
  close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.downListeners.clear();
    this.stopListening?.();
    return Promise.resolve();
  }

  private async send(body: string): Promise<boolean> {
    const outcome = this.closed ? 'not-connected' : await this.signed.send(body);
    if (outcome === 'sent') return true;
    this.losses.count(outcome === 'failed' ? 'publish failed' : 'redis is not connected', { channel: this.channel });
    return false;
  }

  private refused(reason: Refusal): void {
    // Without a secret anyone's message is as good as a publisher's: one we cannot read may have been one.
    const unreadable = reason === 'malformed' || reason === 'too-large';
    if (!this.options.channels.settings.signingSecret && unreadable) this.emit({ kind: 'gap', reason });
  }

  private deliver(opened: SignedMessage): void {
    const { message, problem } = parseInvalidation(opened.body, opened.from);
    if (!message) {
      this.refusals.count('undecodable', { channel: this.channel, problem });
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
