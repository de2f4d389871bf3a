/**
 * How every part of a process reaches Redis: the change event bus, the response cache's
 * invalidation bus and its shared tier all open their connections here, with one set of
 * options, and name their channels here. A later Redis mode (a cluster, channels per topic)
 * changes this module, not the three users.
 *
 * - ioredis reconnects forever, quickly at first (a restart takes a moment), then no more often
 *   than every 2 s.
 * - A command issued while disconnected fails at once (no offline queue: a queue would replay
 *   stale work in a burst, unbounded), and a command to a Redis that stopped answering (hung,
 *   or a network that drops packets) fails after `commandTimeoutMs`: nothing waits on Redis
 *   for longer than its caller chose.
 * - A subscriber connection keeps its offline queue: it only ever queues its SUBSCRIBE.
 * - Every connection has an 'error' listener (ioredis prints each failed reconnect otherwise)
 *   that logs at debug: the users report what matters (lost, refused, down) themselves.
 */
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/** Where a process's Redis is and whether what it reads there is authenticated. */
export interface RedisSettings {
  /** `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS. */
  url: string;
  /**
   * REDIS_SIGNING_SECRET: every message and cache entry written is signed, and everything read
   * is refused unless signed with it and fresh (signedEnvelope.ts).
   */
  signingSecret?: string | undefined;
}

/** The connection client every user gets (a cluster client would be one more member here). */
export type RedisClient = Redis;

/** Reconnection backoff: doubling from `baseDelayMs` up to `maxDelayMs`. */
export interface Backoff {
  baseDelayMs: number;
  maxDelayMs: number;
}

export const RECONNECT_BACKOFF: Backoff = { baseDelayMs: 50, maxDelayMs: 2000 };

/** How long a command may wait for an answer by default: past it, the caller counts a failure. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1000;

export interface OpenRedisOptions {
  /** Names the connection in CLIENT LIST (`tablegraph-<role>`). */
  role: string;
  log: Pick<Logger, 'debug'>;
  /** A subscriber connection: it queues its SUBSCRIBE while disconnected, and has no command timeout. */
  subscriber?: boolean | undefined;
  commandTimeoutMs?: number | undefined;
  backoff?: Backoff | undefined;
}

/** Refuses a URL ioredis would misread, naming what was expected. */
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

/** The options of every connection (exported for the unit test that pins them). */
export function redisOptions(options: Omit<OpenRedisOptions, 'log'>): RedisOptions {
  const { baseDelayMs, maxDelayMs } = options.backoff ?? RECONNECT_BACKOFF;
  return {
    retryStrategy: (times) => Math.min(baseDelayMs * 2 ** Math.min(times - 1, 16), maxDelayMs),
    enableOfflineQueue: options.subscriber === true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    ...(options.subscriber ? {} : { commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS }),
    lazyConnect: true,
    connectionName: `tablegraph-${options.role}`,
  };
}

/** A connection, not yet connected (`connect()` it, or use `connectWithin`). */
export function openRedis(settings: RedisSettings, options: OpenRedisOptions): RedisClient {
  assertRedisUrl(settings.url);
  const connection = new Redis(settings.url, redisOptions(options));
  connection.on('error', (error: Error) => options.log.debug({ err: error, role: options.role }, 'redis error'));
  return connection;
}

/**
 * Waits for `connecting` (connections, subscriptions) at most `waitMs`: a process starts
 * whether or not Redis is up, and its connections keep trying in the background.
 */
export async function connectWithin(connecting: Promise<unknown>, waitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    connecting.catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
  ]);
  clearTimeout(timer);
}

/** Closes connections politely (QUIT, waited for at most a second: Redis may be hung), then for sure. */
export async function closeAll(connections: readonly RedisClient[]): Promise<void> {
  await connectWithin(Promise.all(connections.map((connection) => connection.quit().catch(() => undefined))), 1000);
  for (const connection of connections) connection.disconnect();
}

/** The pub/sub channels of one table: each deployment (and each test file) has its own. */
export const redisChannel = (topic: 'change-events' | 'invalidations', tableName: string): string =>
  `tablegraph:${topic}:${tableName}`;

/** The prefix of the response cache's keys of one table. */
export const responseCachePrefix = (tableName: string): string => `tablegraph:rc:${tableName}:`;
