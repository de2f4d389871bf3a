/**
 * The event bus on Redis pub/sub (ElastiCache in production), for N API instances fed by
 * standalone stream consumers (`npm run consumer`) or the stream Lambda.
 *
 * - Two connections (redisConnection.ts): pub/sub puts a Redis connection in subscriber mode,
 *   where it can no longer PUBLISH.
 * - One channel per table (`tablegraph:change-events:<table>`), so several deployments (or test
 *   files) can share one Redis without seeing each other's changes. Every kind of change event
 *   travels on it (each event names its topics; routing by topic is not built yet).
 * - ioredis reconnects with capped exponential backoff forever and subscribes again after a
 *   reconnect, so existing GraphQL subscriptions receive events again once Redis is back.
 * - Pub/sub is fire-and-forget: an event published while Redis (or this instance's subscriber
 *   connection) is down is not delivered to those who missed it. The publisher does not queue
 *   while disconnected (a queue would replay stale events in a burst, unbounded): it counts the
 *   event as lost and goes on.
 * - Every message received is checked before anything reads it: its envelope
 *   (signedEnvelope.ts: size, the signature when `signingSecret` is set, freshness: nothing older
 *   than the window or from before this subscription, no publisher's number twice), then the
 *   event's schema (eventSchema.ts). A bad one is dropped and counted (`rejected`, by reason),
 *   with one warning per `warnIntervalMs`, not one per message or listener. A publisher refuses
 *   an event that would not pass (counted as lost).
 */
import type { Logger } from 'pino';
import { startReceiveSpan } from '../telemetry/busSpans.js';
import { describeEvent } from './changeEvent.js';
import type { ChangeEvent } from './changeEvent.js';
import type { ChangeEventListener, EventBus, EventBusHealth } from './eventBus.js';
import { decodeEvent, encodeEvent, EVENT_LIMITS } from './eventSchema.js';
import { closeAll, connectWithin, openRedis, redisChannel } from './redisConnection.js';
import type { Backoff, RedisClient, RedisSettings } from './redisConnection.js';
import { Freshness, openEnvelope, RefusalCounter, Sealer } from './signedEnvelope.js';

/** Rejected (unsigned, forged, replayed, malformed) messages are counted always, and logged at most this often. */
const REJECTED_WARNING_INTERVAL_MS = 60_000;
const PURPOSE = 'change-event';

export interface RedisEventBusOptions extends RedisSettings {
  tableName: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Listen to the channel too (default true); a consumer that only publishes says false. */
  subscribe?: boolean | undefined;
  /** Reconnect backoff (default RECONNECT_BACKOFF). */
  backoff?: Backoff | undefined;
  /** Called when the connection state changes (metrics). */
  onHealth?: ((health: EventBusHealth) => void) | undefined;
  /** At most one warning about rejected messages per this many ms (default REJECTED_WARNING_INTERVAL_MS). */
  warnIntervalMs?: number | undefined;
  /** The clock messages are dated and judged by (tests). */
  now?: (() => number) | undefined;
}

export const changeEventsChannel = (tableName: string): string => redisChannel('change-events', tableName);

export class RedisEventBus implements EventBus {
  private readonly publisher: RedisClient;
  private readonly subscriber: RedisClient;
  private readonly channel: string;
  private readonly listeners = new Set<ChangeEventListener>();
  private readonly options: RedisEventBusOptions;
  private readonly sealer: Sealer;
  private readonly freshness: Freshness;
  private readonly now: () => number;
  private lostCount = 0;
  /** Messages received and dropped, by reason (the envelope's, or `invalid` for the schema). */
  readonly refusals: RefusalCounter;
  private closed = false;
  /** start() has run: before, connection states are not reported (one connection may be up before the other). */
  private started = false;
  private lastStatus: EventBusHealth['status'] | undefined;
  private readonly listening: boolean;
  /** The subscriber connection's SUBSCRIBE went through since it last connected. */
  private subscribed = false;
  onDelivered: ((latencyMs: number) => void) | undefined;

  constructor(options: RedisEventBusOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.listening = options.subscribe ?? true;
    this.channel = changeEventsChannel(options.tableName);
    this.sealer = new Sealer(PURPOSE, options.signingSecret);
    this.freshness = new Freshness({ now: this.now });
    this.refusals = new RefusalCounter(
      'change events on redis',
      options.log,
      options.warnIntervalMs ?? REJECTED_WARNING_INTERVAL_MS,
    );
    const common = { log: options.log, backoff: options.backoff };
    this.publisher = openRedis(options, { ...common, role: 'publisher' });
    this.subscriber = openRedis(options, { ...common, role: 'subscriber', subscriber: true });
    for (const [role, connection] of [
      ['publisher', this.publisher],
      ['subscriber', this.subscriber],
    ] as const) {
      connection.on('ready', () => this.statusChanged(role));
      connection.on('close', () => this.statusChanged(role));
    }
    // The Buffer form: a message's size is checked before it is turned into a string.
    this.subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) =>
      this.deliver(channel.toString(), message),
    );
    if (this.listening) {
      // ioredis subscribes again after a reconnect only to channels whose SUBSCRIBE succeeded:
      // one that failed because Redis was down at start-up would never be retried. Subscribing
      // on every 'ready' covers both (a repeated SUBSCRIBE is a no-op for Redis).
      this.subscriber.on('ready', () => void this.subscribeChannel());
      this.subscriber.on('close', () => {
        this.subscribed = false;
        this.freshness.connectionLost();
      });
    }
  }

  /**
   * Connects both connections and subscribes. Resolves once connected, or after `waitMs`
   * without Redis (the bus then keeps reconnecting in the background: an API instance starts
   * and serves queries whether or not Redis is up). Logs the state once, then each change.
   */
  async start(waitMs = 2000): Promise<void> {
    const listen = async () => {
      await this.subscriber.connect();
      await this.subscribeChannel();
    };
    await connectWithin(
      Promise.all([this.publisher.connect().catch(() => undefined), ...(this.listening ? [listen()] : [])]),
      waitMs,
    );
    this.started = true;
    this.statusChanged('subscriber');
  }

  async publish(event: ChangeEvent): Promise<void> {
    if (this.closed || this.publisher.status !== 'ready') {
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
    try {
      await this.publisher.publish(this.channel, this.sealer.seal(body, this.now()));
    } catch (error) {
      this.lose(event, 'redis publish failed', error);
    }
  }

  subscribe(listener: ChangeEventListener): () => void {
    const own: ChangeEventListener = (event) => listener(event);
    this.listeners.add(own);
    return () => this.listeners.delete(own);
  }

  health(): EventBusHealth {
    const listening = !this.listening || (this.subscriber.status === 'ready' && this.subscribed);
    const up = this.publisher.status === 'ready' && listening;
    return { kind: 'redis', status: up ? 'up' : 'down' };
  }

  get lost(): number {
    return this.lostCount;
  }

  get rejected(): number {
    return this.refusals.total;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await closeAll(this.listening ? [this.publisher, this.subscriber] : [this.publisher]);
    this.subscriber.disconnect();
  }

  private async subscribeChannel(): Promise<void> {
    try {
      // Messages dated before this cannot have been sent to this subscription.
      this.freshness.subscribing(this.now());
      await this.subscriber.subscribe(this.channel);
      this.subscribed = true;
      this.statusChanged('subscriber');
    } catch (error) {
      this.options.log.warn({ err: error }, 'redis subscribe failed; retried on the next reconnect');
    }
  }

  private deliver(channel: string, message: Buffer): void {
    if (channel !== this.channel) return;
    const opened = openEnvelope(message, {
      purpose: PURPOSE,
      secret: this.options.signingSecret,
      maxBytes: EVENT_LIMITS.bytes,
    });
    if (!opened.ok) {
      this.refusals.count(opened.reason, { channel: this.channel });
      return;
    }
    const stale = this.freshness.check(opened.from, opened.seq, opened.at);
    if (stale) {
      this.refusals.count(stale, { channel: this.channel, from: opened.from });
      return;
    }
    const decoded = decodeEvent(opened.body);
    if (!decoded.ok) {
      this.refusals.count('invalid', { channel: this.channel, problem: decoded.reason });
      return;
    }
    this.onDelivered?.(this.now() - opened.at);
    const received = startReceiveSpan(this.channel, decoded.event.traceparent);
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

  private statusChanged(role: 'publisher' | 'subscriber'): void {
    if (!this.started) return;
    const health = this.health();
    if (health.status === this.lastStatus) return;
    const first = this.lastStatus === undefined;
    this.lastStatus = health.status;
    if (health.status === 'up') this.options.log.info({ role }, 'redis event bus connected');
    else if (first) this.options.log.warn({ role }, 'redis event bus not connected yet; connecting in the background');
    else if (!this.closed) this.options.log.warn({ role }, 'redis event bus disconnected; reconnecting');
    this.options.onHealth?.(health);
  }
}
