/**
 * The response cache's invalidations between processes, on a Redis pub/sub channel of their own
 * (`tablegraph:invalidations:<table>`), apart from the order events: stream consumers (and the
 * instance that ran a mutation) publish the dependency tags a change touched; every API
 * instance evicts them. Consumers also publish a heartbeat while they read the stream: an
 * instance serves from its cache only while heartbeats arrive (src/pipeline/responseCache/).
 *
 * Every message is checked on receipt (size, shape, each tag's pattern) and dropped when it
 * does not fit: whoever can publish on the channel can evict entries, never plant one.
 */
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { TAG_PATTERN } from '../table/dependencies.js';
import { MAX_TRACEPARENTS } from '../table/limits.js';
import { TRACEPARENT } from './eventSchema.js';

export const invalidationsChannel = (tableName: string): string => `tablegraph:invalidations:${tableName}`;

/** Bounds of one message: a batch of up to 1,000 stream records touches far fewer distinct tags. */
export const MAX_INVALIDATION_MESSAGE_BYTES = 256_000;
export const MAX_TAGS_PER_MESSAGE = 5_000;

export type InvalidationMessage =
  | {
      v: 1;
      kind: 'tags';
      tags: string[];
      /** epoch ms of the oldest change */
      changedAt?: number | undefined;
      /** The W3C traceparents of the writes that made the changes, when they were traced. */
      traceparents?: string[] | undefined;
    }
  | { v: 1; kind: 'heartbeat'; /** who beats (a consumer's owner id) */ from: string };

/** The message in `raw`, or undefined (with why) when it is not one this version accepts. */
export function parseInvalidation(raw: string): { message?: InvalidationMessage; problem?: string } {
  if (raw.length > MAX_INVALIDATION_MESSAGE_BYTES) return { problem: 'too large' };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { problem: 'not JSON' };
  }
  const m = value as Record<string, unknown> | null;
  if (typeof m !== 'object' || m === null || m.v !== 1) return { problem: 'unknown version' };
  if (m.kind === 'heartbeat') {
    if (typeof m.from !== 'string' || m.from.length > 200) return { problem: 'bad heartbeat' };
    return { message: { v: 1, kind: 'heartbeat', from: m.from } };
  }
  if (m.kind !== 'tags' || !Array.isArray(m.tags) || m.tags.length > MAX_TAGS_PER_MESSAGE)
    return { problem: 'bad tags' };
  const tags = m.tags as unknown[];
  if (!tags.every((tag): tag is string => typeof tag === 'string' && TAG_PATTERN.test(tag))) {
    return { problem: 'a tag of an unknown shape' };
  }
  const changedAt = typeof m.changedAt === 'number' && Number.isFinite(m.changedAt) ? m.changedAt : undefined;
  // Trace contexts only link spans: malformed ones are left out, the eviction still happens.
  const traceparents = Array.isArray(m.traceparents)
    ? (m.traceparents as unknown[])
        .filter((value): value is string => typeof value === 'string' && TRACEPARENT.test(value))
        .slice(0, MAX_TRACEPARENTS)
    : [];
  return { message: { v: 1, kind: 'tags', tags, changedAt, ...(traceparents.length > 0 ? { traceparents } : {}) } };
}

export interface InvalidationBusOptions {
  url: string;
  tableName: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** Listen to the channel (API instances); a consumer that only publishes says false. */
  subscribe: boolean;
}

export type InvalidationListener = (message: InvalidationMessage) => void;

export class RedisInvalidationBus {
  private readonly publisher: Redis;
  private readonly subscriber: Redis | undefined;
  readonly channel: string;
  private readonly listeners = new Set<InvalidationListener>();
  private readonly downListeners = new Set<() => void>();
  private closed = false;
  /** Messages dropped on receipt (malformed) and publishes that failed. */
  dropped = 0;
  lost = 0;

  constructor(private readonly options: InvalidationBusOptions) {
    this.channel = invalidationsChannel(options.tableName);
    const common: RedisOptions = {
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times - 1, 16), 2000),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      lazyConnect: true,
    };
    this.publisher = new Redis(options.url, { ...common, connectionName: 'tablegraph-invalidations-publisher' });
    this.publisher.on('error', (error: Error) => options.log.debug({ err: error }, 'redis invalidations error'));
    if (options.subscribe) {
      const subscriber = new Redis(options.url, {
        ...common,
        enableOfflineQueue: true,
        connectionName: 'tablegraph-invalidations-subscriber',
      });
      subscriber.on('error', (error: Error) => options.log.debug({ err: error }, 'redis invalidations error'));
      // Resubscribe on every ready (see redisEventBus.ts); a closed connection has lost messages.
      subscriber.on('ready', () => void subscriber.subscribe(this.channel).catch(() => undefined));
      subscriber.on('close', () => {
        for (const listener of this.downListeners) listener();
      });
      subscriber.on('message', (channel: string, raw: string) => this.deliver(channel, raw));
      this.subscriber = subscriber;
    }
  }

  /** Connects (and subscribes); resolves once connected or after `waitMs` (it keeps reconnecting). */
  async start(waitMs = 2000): Promise<void> {
    const connected = Promise.all([
      this.publisher.connect().catch(() => undefined),
      this.subscriber
        ?.connect()
        .then(() => this.subscriber?.subscribe(this.channel))
        .catch(() => undefined),
    ]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([connected, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  /** Never rejects: a message that cannot be sent is counted in `lost`. */
  async publish(message: InvalidationMessage): Promise<void> {
    if (this.closed || this.publisher.status !== 'ready') {
      this.lost++;
      return;
    }
    try {
      await this.publisher.publish(this.channel, JSON.stringify(message));
    } catch {
      this.lost++;
    }
  }

  /** Calls `listener` with each valid message from now on. */
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
    const connections = [this.publisher, ...(this.subscriber ? [this.subscriber] : [])];
    await Promise.all(connections.map((connection) => connection.quit().catch(() => undefined)));
    for (const connection of connections) connection.disconnect();
  }

  private deliver(channel: string, raw: string): void {
    if (channel !== this.channel) return;
    const { message, problem } = parseInvalidation(raw);
    if (!message) {
      this.dropped++;
      this.options.log.warn({ channel, problem }, 'invalidation message dropped');
      return;
    }
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch (error) {
        this.options.log.warn({ err: error }, 'invalidation listener failed');
      }
    }
  }
}
