/**
 * The event bus on Redis pub/sub (ElastiCache in production), for N API instances fed by
 * standalone stream consumers (`npm run consumer`) or the stream Lambda: one channel of the
 * process's RedisChannels (redisChannels.ts), `tablegraph:{<table>:change-events}`. Every kind of change
 * event travels on it (each event names its topics).
 *
 * - ioredis reconnects with capped exponential backoff forever and the channel is subscribed
 *   again after a reconnect, so existing GraphQL subscriptions receive events again once Redis
 *   is back.
 * - Pub/sub is fire-and-forget: an event published while Redis (or this instance's subscriber
 *   connection) is down is not delivered to those who missed it. The publisher does not queue
 *   while disconnected (a queue would replay stale events in a burst, unbounded): it counts the
 *   event as lost and goes on.
 * - Every message received is checked before anything reads it: its envelope
 *   (signedChannel.ts: size, the signature when a signing secret is set, freshness), then the
 *   event's schema (eventSchema.ts). A bad one is dropped and counted (`refusals`, by reason:
 *   the envelope's, or `invalid`), with one warning per `warnIntervalMs`, not one per message
 *   or listener. A publisher refuses an event that would not pass (counted as lost).
 */
import type { Logger } from 'pino';
import { startReceiveSpan } from '../telemetry/busSpans.js';
import { describeEvent } from './changeEvent.js';
import type { ChangeEvent } from './changeEvent.js';
import type { ChangeEventListener, EventBus, EventBusHealth } from './eventBus.js';
import { decodeEvent, encodeEvent, EVENT_LIMITS } from './eventSchema.js';
import type { RedisChannels } from './redisChannels.js';
import { topicChannel } from './redisNames.js';
import { SignedChannel } from './signedChannel.js';
import type { SignedMessage } from './signedChannel.js';
import type { RefusalCounter } from './signedEnvelope.js';

/** Rejected (unsigned, forged, replayed, malformed) messages are counted always, and logged at most this often. */
const REJECTED_WARNING_INTERVAL_MS = 60_000;
const PURPOSE = 'change-event';

export interface RedisEventBusOptions {
  /** The process's pub/sub (the caller starts and closes it). */
  channels: RedisChannels;
  tableName: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Listen to the channel too (default true); a stream reader that only publishes says false. */
  subscribe?: boolean | undefined;
  /** At most one warning about rejected messages per this many ms (default REJECTED_WARNING_INTERVAL_MS). */
  warnIntervalMs?: number | undefined;
  /** The clock messages are dated and judged by (tests). */
  now?: (() => number) | undefined;
}

export const changeEventsChannel = (tableName: string): string => topicChannel(tableName, 'change-events');

export class RedisEventBus implements EventBus {
  private readonly channel: SignedChannel;
  private readonly listeners = new Set<ChangeEventListener>();
  private readonly now: () => number;
  private readonly listening: boolean;
  private readonly stopListening: (() => void) | undefined;
  private lostCount = 0;
  private closed = false;
  onDelivered: ((latencyMs: number) => void) | undefined;

  constructor(private readonly options: RedisEventBusOptions) {
    this.now = options.now ?? Date.now;
    this.listening = options.subscribe ?? true;
    this.channel = new SignedChannel({
      channels: options.channels,
      name: changeEventsChannel(options.tableName),
      purpose: PURPOSE,
      maxBytes: EVENT_LIMITS.bytes,
      what: 'change events on redis',
      log: options.log,
      warnIntervalMs: options.warnIntervalMs ?? REJECTED_WARNING_INTERVAL_MS,
      now: this.now,
    });
    this.stopListening = this.listening ? this.channel.listen({ message: (m) => this.deliver(m) }) : undefined;
  }

  /** Messages received and dropped, by reason (the envelope's, or `invalid` for the schema). */
  get refusals(): RefusalCounter {
    return this.channel.refusals;
  }

  async publish(event: ChangeEvent): Promise<void> {
    if (this.closed) {
      this.lose(event, 'redis is not connected');
      return;
    }
    let body: string;
    try {
      body = encodeEvent(event);
    } catch (error) {
      this.lose(event, 'the event does not fit the schema or its bounds', error);
      return;
    }
    const outcome = await this.channel.send(body);
    if (outcome === 'not-connected') this.lose(event, 'redis is not connected');
    else if (outcome === 'failed') this.lose(event, 'redis publish failed');
  }

  subscribe(listener: ChangeEventListener): () => void {
    const own: ChangeEventListener = (event) => listener(event);
    this.listeners.add(own);
    return () => this.listeners.delete(own);
  }

  health(): EventBusHealth {
    const up = this.options.channels.publisherUp && (!this.listening || this.channel.subscribed);
    return { kind: 'redis', status: up ? 'up' : 'down' };
  }

  get lost(): number {
    return this.lostCount;
  }

  get rejected(): number {
    return this.refusals.total;
  }

  /** Stops listening; publish() afterwards counts as lost. The connections are the caller's (RedisChannels). */
  close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.stopListening?.();
    return Promise.resolve();
  }

  private deliver(message: SignedMessage): void {
    const name = this.channel.name;
    const decoded = decodeEvent(message.body);
    if (!decoded.ok) {
      this.refusals.count('invalid', { channel: name, problem: decoded.reason });
      return;
    }
    this.onDelivered?.(this.now() - message.at);
    const received = startReceiveSpan(name, decoded.event.traceparent);
    const event = received ? { ...decoded.event, traceparent: received.traceparent } : decoded.event;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.options.log.warn({ err: error }, 'change event listener failed');
      }
    }
    received?.span.setAttribute('tablegraph.event.listeners', this.listeners.size).end();
  }

  private lose(event: ChangeEvent, reason: string, error?: unknown): void {
    this.lostCount++;
    this.options.log.warn(
      { err: error, ...describeEvent(event), lost: this.lostCount },
      `change event lost: ${reason}`,
    );
  }
}
