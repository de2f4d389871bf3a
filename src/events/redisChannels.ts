/**
 * A process's pub/sub on Redis: one publishing connection and one subscribing side
 * (redisSubscriber.ts), whatever travels on them. Change events, invalidations and heartbeats
 * are channels of one RedisChannels (signedChannel.ts seals and checks what they carry), so an
 * instance holds one publisher/subscriber pair on one node, and in a cluster one publishing
 * cluster connection and one subscriber connection per primary that serves a channel it
 * listens to.
 *
 * - One node: PUBLISH and SUBSCRIBE. A cluster: SPUBLISH and SSUBSCRIBE (sharded pub/sub): a
 *   message goes to the primary that owns its channel's slot and to the subscribers there, not
 *   over the whole cluster's bus.
 * - A channel is subscribed while something listens to it (`listen` returns the unsubscribe),
 *   so a channel per topic costs nothing where nobody listens.
 * - `publish` never queues: Redis down, or a command that fails or outlasts its timeout,
 *   rejects, and the caller counts a loss.
 * - It logs once when Redis is up at start (or that it is not, yet), then each change: down
 *   when the publisher or a listened channel's subscription is lost, up when all are back.
 */
import type { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { closeAll, connectWithin, openRedis } from './redisConnection.js';
import type { Backoff, RedisClient, RedisSettings } from './redisConnection.js';
import { NodeSubscriber, ShardSubscriber } from './redisSubscriber.js';
import type { Subscriber } from './redisSubscriber.js';

/** What a listener of one channel is told (see redisSubscriber.ts for the order). */
export interface ChannelHandlers {
  message(raw: Buffer): void;
  /** The SUBSCRIBE is about to be sent: messages dated earlier were not sent to this subscription. */
  subscribing?(): void;
  subscribed?(): void;
  /** The subscription's connection closed: messages published meanwhile are lost. */
  lost?(): void;
}

export type RedisHealth = 'up' | 'down';

export interface RedisChannelsOptions {
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** Reconnect backoff (default RECONNECT_BACKOFF). */
  backoff?: Backoff | undefined;
  /** How long a publish or a history read may wait for Redis (default DEFAULT_COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number | undefined;
}

/** How long a channel's first SUBSCRIBE may take before the channels count as down. */
const SUBSCRIBE_GRACE_MS = 2000;

export class RedisChannels {
  private readonly publisher: RedisClient;
  private readonly subscriber: Subscriber;
  private readonly listeners = new Map<string, Set<ChannelHandlers>>();
  private readonly subscribed = new Set<string>();
  /**
   * The channels listened to since the start whose first SUBSCRIBE is on its way, with when it
   * was asked: joining a topic is not losing Redis, so for SUBSCRIBE_GRACE_MS they count as up.
   */
  private readonly joining = new Map<string, number>();
  private readonly waiting = new Set<() => void>();
  private started = false;
  private closed = false;
  private lastHealth: RedisHealth | undefined;

  constructor(
    readonly settings: RedisSettings,
    private readonly options: RedisChannelsOptions,
  ) {
    const common = { log: options.log, backoff: options.backoff };
    this.publisher = openRedis(settings, { ...common, role: 'publisher', commandTimeoutMs: options.commandTimeoutMs });
    const events = {
      message: (channel: string, raw: Buffer) => {
        for (const handlers of this.listeners.get(channel) ?? []) handlers.message(raw);
      },
      subscribing: (channel: string) => {
        for (const handlers of this.listeners.get(channel) ?? []) handlers.subscribing?.();
      },
      subscribed: (channel: string) => {
        this.subscribed.add(channel);
        this.joining.delete(channel);
        for (const handlers of this.listeners.get(channel) ?? []) handlers.subscribed?.();
        for (const wake of [...this.waiting]) wake();
        this.healthChanged();
      },
      lost: (channel: string) => {
        const was = this.subscribed.delete(channel);
        const wasJoining = this.joining.delete(channel);
        for (const handlers of this.listeners.get(channel) ?? []) handlers.lost?.();
        if (was || wasJoining) this.healthChanged();
      },
    };
    const subscriberOptions = { settings, log: options.log, backoff: options.backoff, events };
    this.subscriber =
      settings.mode === 'cluster'
        ? new ShardSubscriber(subscriberOptions, this.publisher as Cluster)
        : new NodeSubscriber(subscriberOptions);
    this.publisher.on('ready', () => this.healthChanged());
    this.publisher.on('close', () => this.healthChanged());
  }

  /**
   * Connects, and subscribes what is listened to so far. Resolves once connected and subscribed,
   * or after `waitMs` without Redis (the connections keep trying in the background: a process
   * starts and serves whether or not Redis is up). Logs the state once, then each change.
   */
  async start(waitMs = 2000): Promise<void> {
    await connectWithin(
      (async () => {
        await this.publisher.connect().catch(() => undefined);
        await this.subscriber.connect().catch(() => undefined);
        await this.allSubscribed();
      })(),
      waitMs,
    );
    this.started = true;
    this.healthChanged();
  }

  /** Sends `message` on `channel`. Rejects when Redis is not connected or does not take it in time. */
  async publish(channel: string, message: string): Promise<void> {
    if (this.closed || this.publisher.status !== 'ready') throw new Error('redis is not connected');
    await (this.settings.mode === 'cluster'
      ? this.publisher.spublish(channel, message)
      : this.publisher.publish(channel, message));
  }

  /**
   * Appends `message` to the Redis Stream `key` (trimmed to about `maxLen` entries, expiring
   * `ttlSeconds` after the last append), then sends it on `channel`: one pipeline on one
   * connection, so the history holds a message before any subscriber hears it. `key` and
   * `channel` must share a hash tag (redisNames.ts): in a cluster both live on one primary.
   * Rejects like `publish`.
   */
  async append(key: string, channel: string, message: string, maxLen: number, ttlSeconds: number): Promise<void> {
    if (this.closed || this.publisher.status !== 'ready') throw new Error('redis is not connected');
    const pipeline = this.publisher
      .pipeline()
      .xadd(key, 'MAXLEN', '~', String(maxLen), '*', 'm', message)
      .expire(key, ttlSeconds);
    if (this.settings.mode === 'cluster') pipeline.spublish(channel, message);
    else pipeline.publish(channel, message);
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([error]) => error)?.[0];
    if (failed) throw failed;
  }

  /** The messages of the Redis Stream `key` (its `last` newest only, when given), oldest first (none when it does not exist). */
  async history(key: string, last?: number): Promise<Buffer[]> {
    if (this.closed || this.publisher.status !== 'ready') throw new Error('redis is not connected');
    const entries =
      last === undefined
        ? await this.publisher.xrangeBuffer(key, '-', '+')
        : (await this.publisher.xrevrangeBuffer(key, '+', '-', 'COUNT', last)).reverse();
    return entries.flatMap(([, fields]) => {
      for (let i = 0; i + 1 < fields.length; i += 2)
        if (fields[i]?.toString() === 'm') return [fields[i + 1] as Buffer];
      return [];
    });
  }

  /** Whether a publish would be sent now. */
  get publisherUp(): boolean {
    return !this.closed && this.publisher.status === 'ready';
  }

  /** Whether `channel`'s subscription is in place now. */
  isSubscribed(channel: string): boolean {
    return this.subscribed.has(channel);
  }

  /** Listens to `channel` from now on (subscribing it if nothing did); the returned function stops. */
  listen(channel: string, handlers: ChannelHandlers): () => void {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    const own = { ...handlers };
    set.add(own);
    if (set.size === 1) {
      if (this.started) this.joining.set(channel, performance.now());
      this.subscriber.add(channel);
    } else if (this.subscribed.has(channel)) {
      // Joins a subscription already in place: nothing dated before now was sent to it.
      own.subscribing?.();
      own.subscribed?.();
    }
    return () => {
      if (!set.delete(own) || set.size > 0) return;
      this.listeners.delete(channel);
      this.subscribed.delete(channel);
      this.joining.delete(channel);
      this.subscriber.remove(channel);
    };
  }

  /**
   * Up while the publisher is connected and every channel listened to is subscribed, or is
   * being joined for less than SUBSCRIBE_GRACE_MS (a channel that lost its subscription is down
   * at once).
   */
  health(): RedisHealth {
    if (!this.publisherUp) return 'down';
    const now = performance.now();
    for (const channel of this.listeners.keys()) {
      if (this.subscribed.has(channel)) continue;
      const asked = this.joining.get(channel);
      if (asked === undefined || now - asked >= SUBSCRIBE_GRACE_MS) return 'down';
    }
    return 'up';
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    for (const wake of [...this.waiting]) wake();
    await closeAll([this.publisher, ...(await this.subscriber.close())]);
  }

  private allSubscribed(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!this.closed && [...this.listeners.keys()].some((channel) => !this.subscribed.has(channel))) return;
        this.waiting.delete(check);
        resolve();
      };
      this.waiting.add(check);
      check();
    });
  }

  private healthChanged(): void {
    if (!this.started || this.closed) return;
    const health = this.health();
    if (health === this.lastHealth) return;
    const first = this.lastHealth === undefined;
    this.lastHealth = health;
    const fields = { mode: this.settings.mode ?? 'single' };
    if (health === 'up') this.options.log.info(fields, 'redis connected');
    else if (first) this.options.log.warn(fields, 'redis not connected yet; connecting in the background');
    else this.options.log.warn(fields, 'redis disconnected; reconnecting');
  }
}
