/**
 * The event bus on Redis pub/sub (ElastiCache in production), for N API instances fed by
 * standalone stream consumers (`npm run consumer`) or the stream Lambda.
 *
 * - Two connections: pub/sub puts a Redis connection in subscriber mode, where it can no
 *   longer PUBLISH.
 * - One channel per table (`tablegraph:order-events:<table>`), so several deployments (or test
 *   files) can share one Redis without seeing each other's orders.
 * - ioredis reconnects with capped exponential backoff forever and subscribes again after a
 *   reconnect, so existing GraphQL subscriptions receive events again once Redis is back.
 * - Pub/sub is fire-and-forget: an event published while Redis (or this instance's subscriber
 *   connection) is down is not delivered to those who missed it. The publisher does not queue
 *   while disconnected (a queue would replay stale events in a burst, unbounded): it counts the
 *   event as lost and goes on.
 * - Every message received is checked before anything reads it (src/events/eventSchema.ts:
 *   size, schema, and the HMAC signature when `signingSecret` is set). A bad one is dropped and
 *   counted (`rejected`), with one warning per `warnIntervalMs`, not one per message or listener.
 *   A publisher refuses an event that would not pass (counted as lost).
 */
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { startReceiveSpan } from '../telemetry/busSpans.js';
import type { EventBus, EventBusHealth, OrderEventListener } from './eventBus.js';
import { decodeEnvelope, encodeEnvelope } from './eventSchema.js';
import type { OrderEventModel } from './orderEvent.js';

/** Redis reconnects: quick at first (a restart takes a moment), then no more than every 2 s. */
const RECONNECT_BACKOFF = { baseDelayMs: 50, maxDelayMs: 2000 };
/** Rejected (unsigned or forged) messages are counted always, and logged at most this often. */
const REJECTED_WARNING_INTERVAL_MS = 60_000;

export interface RedisEventBusOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://` for TLS. */
  url: string;
  tableName: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Listen to the channel too (default true); a consumer that only publishes says false. */
  subscribe?: boolean | undefined;
  /** Reconnect backoff: doubling from `baseDelayMs` up to `maxDelayMs` (default RECONNECT_BACKOFF). */
  backoff?: { baseDelayMs: number; maxDelayMs: number } | undefined;
  /** Called when the connection state changes (metrics). */
  onHealth?: ((health: EventBusHealth) => void) | undefined;
  /** EVENT_SIGNING_SECRET: sign what is published, refuse what is received unsigned or forged. */
  signingSecret?: string | undefined;
  /** At most one warning about rejected messages per this many ms (default REJECTED_WARNING_INTERVAL_MS). */
  warnIntervalMs?: number | undefined;
}

export const orderEventsChannel = (tableName: string): string => `tablegraph:order-events:${tableName}`;

/** Refuses a REDIS_URL ioredis would misread, naming what was expected. */
export function assertRedisUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`REDIS_URL must be a redis:// or rediss:// URL, got "${url}"`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`REDIS_URL must start with redis:// or rediss://, got "${parsed.protocol}//"`);
  }
}

export class RedisEventBus implements EventBus {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly channel: string;
  private readonly listeners = new Set<OrderEventListener>();
  private readonly options: RedisEventBusOptions;
  private lostCount = 0;
  private rejectedCount = 0;
  /** Rejected since the last warning, and when that was. */
  private unreported = 0;
  private lastWarnAt = -Infinity;
  private closed = false;
  private lastStatus: EventBusHealth['status'] | undefined;
  private readonly listening: boolean;
  /** The subscriber connection's SUBSCRIBE went through since it last connected. */
  private subscribed = false;
  onDelivered: ((latencyMs: number) => void) | undefined;

  constructor(options: RedisEventBusOptions) {
    assertRedisUrl(options.url);
    this.options = options;
    this.listening = options.subscribe ?? true;
    this.channel = orderEventsChannel(options.tableName);
    const { baseDelayMs, maxDelayMs } = options.backoff ?? RECONNECT_BACKOFF;
    const common: RedisOptions = {
      // Never give up reconnecting; the delay doubles up to the cap.
      retryStrategy: (times) => Math.min(baseDelayMs * 2 ** Math.min(times - 1, 16), maxDelayMs),
      // A command issued while disconnected fails at once instead of waiting in a queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      lazyConnect: true,
    };
    this.publisher = new Redis(options.url, { ...common, connectionName: 'tablegraph-publisher' });
    // The subscriber subscribes on every 'ready' (below); its offline queue only holds that.
    this.subscriber = new Redis(options.url, {
      ...common,
      enableOfflineQueue: true,
      connectionName: 'tablegraph-subscriber',
    });
    for (const [role, connection] of [
      ['publisher', this.publisher],
      ['subscriber', this.subscriber],
    ] as const) {
      // Without an 'error' listener ioredis prints every failed reconnect to stderr.
      connection.on('error', (error: Error) => options.log.debug({ err: error, role }, 'redis connection error'));
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
      this.subscriber.on('close', () => (this.subscribed = false));
    }
  }

  /**
   * Connects both connections and subscribes. Resolves once connected, or after `waitMs`
   * without Redis (the bus then keeps reconnecting in the background: an API instance starts
   * and serves queries whether or not Redis is up).
   */
  async start(waitMs = 2000): Promise<void> {
    const listen = async () => {
      await this.subscriber.connect();
      await this.subscribeChannel();
    };
    const connected = Promise.all([
      this.publisher.connect().catch(() => undefined),
      ...(this.listening ? [listen().catch(() => undefined)] : []),
    ]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([connected, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    this.statusChanged('subscriber');
  }

  async publish(event: OrderEventModel): Promise<void> {
    if (this.closed || this.publisher.status !== 'ready') {
      this.lose(event, 'redis is not connected');
      return;
    }
    let message: string;
    try {
      message = encodeEnvelope(event, Date.now(), this.options.signingSecret);
    } catch (error) {
      this.lose(event, 'the event does not fit the schema or its bounds', error);
      return;
    }
    try {
      await this.publisher.publish(this.channel, message);
    } catch (error) {
      this.lose(event, 'redis publish failed', error);
    }
  }

  subscribe(listener: OrderEventListener): () => void {
    const own: OrderEventListener = (event) => listener(event);
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
    return this.rejectedCount;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const connections = this.listening ? [this.publisher, this.subscriber] : [this.publisher];
    await Promise.all(connections.map((connection) => connection.quit().catch(() => undefined)));
    for (const connection of [this.publisher, this.subscriber]) connection.disconnect();
  }

  private async subscribeChannel(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
      this.subscribed = true;
      this.statusChanged('subscriber');
    } catch (error) {
      this.options.log.warn({ err: error }, 'redis subscribe failed; retried on the next reconnect');
    }
  }

  private deliver(channel: string, message: Buffer): void {
    if (channel !== this.channel) return;
    const decoded = decodeEnvelope(message, this.options.signingSecret);
    if (!decoded.ok) {
      this.reject(decoded.reason);
      return;
    }
    this.onDelivered?.(Date.now() - decoded.publishedAt);
    const received = startReceiveSpan(this.channel, decoded.event.traceparent);
    const event = received ? { ...decoded.event, traceparent: received.traceparent } : decoded.event;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.options.log.warn({ err: error }, 'order event listener failed');
      }
    }
    received?.span.setAttribute('tablegraph.event.listeners', this.listeners.size).end();
  }

  /** Counts a dropped message; warns at most once per interval, with how many since the last warning. */
  private reject(reason: string): void {
    this.rejectedCount++;
    this.unreported++;
    const now = performance.now();
    if (now - this.lastWarnAt < (this.options.warnIntervalMs ?? REJECTED_WARNING_INTERVAL_MS)) return;
    this.options.log.warn(
      { channel: this.channel, reason, rejected: this.unreported, rejectedTotal: this.rejectedCount },
      'order events on redis rejected (dropped)',
    );
    this.unreported = 0;
    this.lastWarnAt = now;
  }

  private lose(event: OrderEventModel, reason: string, error?: unknown): void {
    this.lostCount++;
    this.options.log.warn(
      { err: error, orderId: event.order.orderId, type: event.type, lost: this.lostCount },
      `order event lost: ${reason}`,
    );
  }

  private statusChanged(role: 'publisher' | 'subscriber'): void {
    const health = this.health();
    if (health.status === this.lastStatus) return;
    this.lastStatus = health.status;
    if (health.status === 'up') this.options.log.info({ role }, 'redis event bus connected');
    else if (!this.closed) this.options.log.warn({ role }, 'redis event bus disconnected; reconnecting');
    this.options.onHealth?.(health);
  }
}
