/**
 * How every part of a process reaches Redis, one node or a cluster: the channels of
 * redisChannels.ts (change events, invalidations, heartbeats) and the response cache's shared
 * tier open their connections here, with one set of options, and name their channels and keys
 * here (redisNames.ts).
 *
 * - `REDIS_MODE=single` (the default): `REDIS_URL` is one `redis://` or `rediss://` URL, and
 *   each connection is an ioredis `Redis`.
 * - `REDIS_MODE=cluster`: `REDIS_URL` is a comma-separated list of seed nodes (one is enough;
 *   the others are tried when it is down), and each connection is an ioredis `Cluster` that
 *   follows the slots. Every node is reached by the name it is given, not by an address looked
 *   up first (`dnsLookup`): ElastiCache's TLS certificates name the host, and ElastiCache
 *   Serverless (cluster mode only) answers with host names.
 * - ioredis reconnects forever, quickly at first (a restart takes a moment), then no more often
 *   than every 2 s.
 * - A command issued while disconnected fails at once (no offline queue: a queue would replay
 *   stale work in a burst, unbounded), and a command to a Redis that stopped answering (hung,
 *   or a network that drops packets) fails after `commandTimeoutMs`: nothing waits on Redis
 *   for longer than its caller chose.
 * - A subscriber connection keeps its offline queue: it only ever queues its SUBSCRIBE. It
 *   does not let ioredis subscribe again by itself after a reconnect (`autoResubscribe`):
 *   ioredis sends those SUBSCRIBEs without handling their failure, so a connection closed
 *   before Redis answers them (a shutdown, a node dropped after a fail-over) would leave one
 *   unhandled rejection per channel. redisSubscriber.ts subscribes again on every 'ready'
 *   itself, and logs a failure.
 * - Every connection has an 'error' listener (ioredis prints each failed reconnect otherwise)
 *   that logs at debug: the users report what matters (lost, refused, down) themselves.
 */
import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { parseRedisUrl } from '../config/redisUrl.js';
import type { RedisMode, RedisNode } from '../config/redisUrl.js';
import { settledWithin } from '../settledWithin.js';

export type { RedisMode, RedisNode } from '../config/redisUrl.js';

/** Where a process's Redis is and whether what it reads there is authenticated. */
export interface RedisSettings {
  /**
   * `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS; in cluster mode a
   * comma-separated list of such URLs (seed nodes, without a database number).
   */
  url: string;
  /** One node (default) or a cluster. */
  mode?: RedisMode | undefined;
  /**
   * REDIS_SIGNING_SECRET: every message and cache entry written is signed, and everything read
   * is refused unless signed with it and fresh (signedEnvelope.ts).
   */
  signingSecret?: string | undefined;
}

/** A connection: to one node, or to a cluster (which holds one per node it needs). */
export type RedisClient = Redis | Cluster;

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

/** The options of every connection to one node (exported for the unit test that pins them). */
export function redisOptions(options: Omit<OpenRedisOptions, 'log'>): RedisOptions {
  const { baseDelayMs, maxDelayMs } = options.backoff ?? RECONNECT_BACKOFF;
  return {
    retryStrategy: (times) => Math.min(baseDelayMs * 2 ** Math.min(times - 1, 16), maxDelayMs),
    enableOfflineQueue: options.subscriber === true,
    autoResubscribe: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    ...(options.subscriber ? {} : { commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS }),
    lazyConnect: true,
    connectionName: `tablegraph-${options.role}`,
  };
}

/** What a node's connection needs to know of REDIS_URL besides its address: TLS and credentials. */
export function nodeAuth(node: RedisNode): Pick<RedisOptions, 'tls' | 'username' | 'password'> {
  return {
    ...(node.tls ? { tls: {} } : {}),
    ...(node.username ? { username: node.username } : {}),
    ...(node.password ? { password: node.password } : {}),
  };
}

/**
 * The options of a cluster connection (exported for the unit test that pins them): every node
 * connection as redisOptions says, the cluster's own reconnection on the same backoff.
 */
export function clusterOptions(options: Omit<OpenRedisOptions, 'log'>, seed: RedisNode): ClusterOptions {
  const { retryStrategy, enableOfflineQueue, lazyConnect, ...node } = redisOptions(options);
  return {
    lazyConnect,
    enableOfflineQueue,
    clusterRetryStrategy: retryStrategy,
    // The name as given: TLS checks it, and ElastiCache Serverless's nodes are names, not addresses.
    dnsLookup: (address, callback) => callback(null, address),
    slotsRefreshTimeout: 2000,
    redisOptions: { ...node, ...nodeAuth(seed) },
  };
}

/** A connection, not yet connected (`connect()` it, or use `connectWithin`). */
export function openRedis(settings: RedisSettings, options: OpenRedisOptions): RedisClient {
  const mode = settings.mode ?? 'single';
  const nodes = parseRedisUrl(settings.url, mode);
  const connection: RedisClient =
    mode === 'cluster'
      ? new Cluster(
          nodes.map(({ host, port }) => ({ host, port })),
          clusterOptions(options, nodes[0] as RedisNode),
        )
      : new Redis(settings.url, redisOptions(options));
  connection.on('error', (error: Error) => options.log.debug({ err: error, role: options.role }, 'redis error'));
  return connection;
}

/**
 * A connection to one node of a cluster (`host:port`, as the cluster's slot map names it), with
 * REDIS_URL's TLS and credentials: a sharded subscription is served by the node that owns its
 * channel's slot (shardSubscriber.ts).
 */
export function openNode(settings: RedisSettings, nodeKey: string, options: OpenRedisOptions): Redis {
  const seed = parseRedisUrl(settings.url, settings.mode ?? 'single')[0] as RedisNode;
  const colon = nodeKey.lastIndexOf(':');
  const connection = new Redis({
    ...redisOptions(options),
    ...nodeAuth(seed),
    host: nodeKey.slice(0, colon),
    port: Number(nodeKey.slice(colon + 1)),
  });
  connection.on('error', (error: Error) => options.log.debug({ err: error, role: options.role }, 'redis error'));
  return connection;
}

/**
 * Waits for `connecting` (connections, subscriptions) at most `waitMs`: a process starts
 * whether or not Redis is up, and its connections keep trying in the background.
 */
export async function connectWithin(connecting: Promise<unknown>, waitMs: number): Promise<void> {
  await settledWithin(connecting, waitMs);
}

/**
 * `command`'s answer, or a rejection once it has not come within `ms`: a bound for one call
 * tighter than its connection's command timeout (the command itself runs on, and its late
 * answer or failure is dropped).
 *
 * The bound is on Redis, not on this process: when the timer fires, the rejection waits one
 * turn of the event loop, after the sockets are read. A loop kept busy past the bound (a busy
 * machine, a long request, a GC) runs its due timers before it reads the sockets, so an answer
 * that arrived in time but was not read yet would otherwise count as none.
 */
export async function answerWithin<T>(command: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let late: NodeJS.Immediate | undefined;
  try {
    return await Promise.race([
      command,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          late = setImmediate(() => reject(new Error(`no answer within ${ms} ms`)));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    clearImmediate(late);
  }
}

/** Closes connections politely (QUIT, waited for at most a second: Redis may be hung), then for sure. */
export async function closeAll(connections: readonly RedisClient[]): Promise<void> {
  await connectWithin(Promise.all(connections.map((connection) => connection.quit().catch(() => undefined))), 1000);
  for (const connection of connections) connection.disconnect();
}
