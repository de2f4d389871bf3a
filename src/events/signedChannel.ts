/**
 * One kind of message on one channel of a process's RedisChannels, in the signed envelope
 * (signedEnvelope.ts): what the change event bus and the invalidation bus have in common.
 *
 * - `send` seals a body right before it is published (one connection keeps a publisher's
 *   numbers in order) and never rejects: it answers whether Redis took it.
 * - A listener receives only what passed the envelope's checks: the size (before anything is
 *   read), the signature when a secret is set, and freshness for its subscription (nothing
 *   older than the window, nothing dated before the subscription began, no publisher's number
 *   twice). What fails is counted in `refusals` by reason (with one warning per interval) and
 *   the listener is told why, for the buses that must treat some refusals as a gap.
 */
import type { Logger } from 'pino';
import type { RedisChannels } from './redisChannels.js';
import { Freshness, openEnvelope, RefusalCounter, Sealer } from './signedEnvelope.js';
import type { Refusal } from './signedEnvelope.js';

export interface SignedChannelOptions {
  channels: RedisChannels;
  /** The channel's name (redisNames.ts). */
  name: string;
  /** What the signature binds the message to: one purpose per kind of message. */
  purpose: string;
  /** Messages larger than this, envelope included, are refused unread. */
  maxBytes: number;
  /** What is refused, for the warning line ("change events on redis"). */
  what: string;
  log: Pick<Logger, 'warn'>;
  /** This publisher's name (default: unique per process start). */
  from?: string | undefined;
  /** At most one warning about refused messages per this many ms. */
  warnIntervalMs?: number | undefined;
  /** The clock messages are dated and judged by (tests). */
  now?: (() => number) | undefined;
  /** A sealer and a refusal count shared by the channels of one kind (a topic each), instead of the channel's own. */
  shared?: { sealer: Sealer; refusals: RefusalCounter } | undefined;
}

/** A message that passed the envelope's checks. */
export interface SignedMessage {
  from: string;
  seq: number;
  /** The publisher's clock when it sealed the message (epoch ms). */
  at: number;
  body: string;
}

export interface SignedListener {
  message(message: SignedMessage): void;
  /** A message was refused (already counted); `reason` is the envelope's. */
  refused?(reason: Refusal): void;
  /** The subscription is in place (again): what is published from now on is heard. */
  subscribed?(): void;
  /** The subscription's connection closed: messages published meanwhile are lost. */
  lost?(): void;
}

export type SendOutcome = 'sent' | 'not-connected' | 'failed';

export class SignedChannel {
  readonly name: string;
  readonly refusals: RefusalCounter;
  private readonly sealer: Sealer;
  private readonly now: () => number;

  constructor(private readonly options: SignedChannelOptions) {
    this.name = options.name;
    this.now = options.now ?? Date.now;
    this.sealer =
      options.shared?.sealer ?? new Sealer(options.purpose, options.channels.settings.signingSecret, options.from);
    this.refusals = options.shared?.refusals ?? new RefusalCounter(options.what, options.log, options.warnIntervalMs);
  }

  /** This publisher's name, as its messages carry it. */
  get from(): string {
    return this.sealer.from;
  }

  /** Seals and publishes `body`; never rejects. */
  async send(body: string): Promise<SendOutcome> {
    if (!this.options.channels.publisherUp) return 'not-connected';
    try {
      await this.options.channels.publish(this.name, this.sealer.seal(body, this.now()));
      return 'sent';
    } catch {
      return 'failed';
    }
  }

  /**
   * Seals `body`, appends it to the history `key` and publishes it (RedisChannels.append);
   * never rejects.
   */
  async append(body: string, key: string, maxLen: number, ttlSeconds: number): Promise<SendOutcome> {
    if (!this.options.channels.publisherUp) return 'not-connected';
    try {
      await this.options.channels.append(key, this.name, this.sealer.seal(body, this.now()), maxLen, ttlSeconds);
      return 'sent';
    } catch {
      return 'failed';
    }
  }

  /**
   * The history `key`'s messages (its `last` newest only, when given), oldest first, that pass the envelope's size and signature
   * checks (the others counted and left out). Freshness does not apply: a history is old by
   * design, and its reader decides what it already has by the bodies' own ids.
   */
  async history(key: string, last?: number): Promise<string[]> {
    const raw = await this.options.channels.history(key, last);
    return raw.flatMap((message) => {
      const opened = openEnvelope(message, {
        purpose: this.options.purpose,
        secret: this.options.channels.settings.signingSecret,
        maxBytes: this.options.maxBytes,
      });
      if (opened.ok) return [opened.body];
      this.refusals.count(opened.reason, { channel: this.name, history: true });
      return [];
    });
  }

  /** Whether this channel's subscription is in place now. */
  get subscribed(): boolean {
    return this.options.channels.isSubscribed(this.name);
  }

  /** Hands `listener` every message that passes the checks, from now on; the returned function stops. */
  listen(listener: SignedListener): () => void {
    const freshness = new Freshness({ now: this.now });
    return this.options.channels.listen(this.name, {
      subscribed: () => listener.subscribed?.(),
      message: (raw) => this.open(raw, freshness, listener),
      // Messages dated before this cannot have been sent to this subscription.
      subscribing: () => freshness.subscribing(this.now()),
      lost: () => {
        freshness.connectionLost();
        listener.lost?.();
      },
    });
  }

  private open(raw: Buffer, freshness: Freshness, listener: SignedListener): void {
    const opened = openEnvelope(raw, {
      purpose: this.options.purpose,
      secret: this.options.channels.settings.signingSecret,
      maxBytes: this.options.maxBytes,
    });
    if (!opened.ok) {
      this.refusals.count(opened.reason, { channel: this.name });
      listener.refused?.(opened.reason);
      return;
    }
    const stale = freshness.check(opened.from, opened.seq, opened.at);
    if (stale) {
      this.refusals.count(stale, { channel: this.name, from: opened.from });
      listener.refused?.(stale);
      return;
    }
    listener.message(opened);
  }
}
