/**
 * Bumping tags in the shared tier (sharedTier.ts): the counter and tag versions that make every
 * entry stored under a tag before the bump invalid, in every partition of the tier.
 *
 * One invalidation is bumped **once fleet-wide, by whoever publishes it, before its message goes
 * out**: the instance that ran a mutation (its SharedTier) and the stream readers that publish
 * over Redis (`npm run consumer`, the stream Lambda: `PublisherBumps`). The message then says so
 * (`bumped`, src/events/invalidationMessages.ts), and an instance that hears it only evicts its
 * own memory: when it hears, the counters have already moved. A publisher whose bump failed or
 * did not answer in time, or that has no tier (RESPONSE_CACHE_SHARED=off, no cache settings),
 * publishes without the flag, and every instance that hears it bumps the tags itself, as all of
 * them once did for every invalidation (docs/decisions/publisher-bumps.md).
 */
import type { Logger } from 'pino';
import { closeAll, connectWithin, openRedis } from '../../events/redisConnection.js';
import type { RedisClient, RedisSettings } from '../../events/redisConnection.js';
import { cachePartitionPrefix } from '../../events/redisNames.js';
import { FEED_TIMEOUT_MS } from './invalidationFeed.js';
import { BUMP } from './sharedScripts.js';

/**
 * Partitions of the tier in a cluster: reads and stores spread over up to this many primaries,
 * and a bump costs this many scripts (sent at once). One node has one.
 */
export const CLUSTER_PARTITIONS = 8;

/**
 * How long a bump may take before it counts as failed (the cache then bypasses and flushes).
 * No request waits on a bump and the tier is skipped while one is pending, so it is given as
 * long as the feed may stay silent: a Redis slower than that also stops the heartbeats, and the
 * feed goes down either way. Cut at the read bound, a bump Redis answered late under load (and
 * applied) made a bypass-and-flush out of nothing.
 */
export const BUMP_TIMEOUT_MS = FEED_TIMEOUT_MS;

/** One partition of the tier: its keys share a hash tag, so each script runs in one slot. */
export interface Partition {
  prefix: string;
  /** `<prefix>seq`: numbers the partition's invalidations. */
  counterKey: string;
  /** `<prefix>t:`: before a tag, its key (`<seq>:<ms>` of its last bump). */
  tagPrefix: string;
}

/** The partitions of `tableName`'s tier: one on a single node, CLUSTER_PARTITIONS in a cluster. */
export function tierPartitions(settings: Pick<RedisSettings, 'mode'>, tableName: string): Partition[] {
  const count = settings.mode === 'cluster' ? CLUSTER_PARTITIONS : 1;
  return Array.from({ length: count }, (_, i) => {
    const prefix = cachePartitionPrefix(tableName, i);
    return { prefix, counterKey: `${prefix}seq`, tagPrefix: `${prefix}t:` };
  });
}

export type Bumping = RedisClient & {
  tgBump(counterKey: string, ...args: (string | number)[]): Promise<number>;
};

/** Teaches `redis` the bump script (as `tgBump`). */
export function defineBump(redis: RedisClient): Bumping {
  redis.defineCommand('tgBump', { numberOfKeys: 1, lua: BUMP });
  return redis as Bumping;
}

/**
 * Bumps `tags` in every partition (the scripts sent at once), each dated by its node's clock
 * (an index hold-down counts from it); each tag's key lives `tagTtlMs`. Rejects when any part
 * failed.
 */
export async function bumpPartitions(
  redis: Bumping,
  partitions: readonly Partition[],
  tags: readonly string[],
  tagTtlMs: number,
): Promise<void> {
  await Promise.all(
    partitions.map(({ counterKey, tagPrefix }) => redis.tgBump(counterKey, tagPrefix, tagTtlMs, ...tags)),
  );
}

export interface PublisherBumpsOptions {
  redis: RedisSettings;
  tableName: string;
  /**
   * How long a tag's version is kept (RESPONSE_CACHE_MAX_AGE). Any value is safe: a missing tag
   * key makes every entry under it invalid, and each store renews its tags' keys to the storing
   * instance's maximum age. It must outlast the index hold-down, which counts from the bump.
   */
  tagTtlMs: number;
  log: Pick<Logger, 'warn' | 'debug'>;
  /** A bump slower than this failed (the message then goes out without the flag). */
  timeoutMs?: number | undefined;
}

/**
 * The bumps of a stream reader that publishes invalidations over Redis (`npm run consumer`,
 * the stream Lambda): it reads nothing from the tier and stores nothing, it only moves the
 * versions of the tags it is about to publish. Its own connection: the tier's keys, not the
 * channels'.
 */
export class PublisherBumps {
  private readonly redis: Bumping;
  private readonly partitions: Partition[];
  /** Bumps that failed or took too long (their messages went out without the flag). */
  failed = 0;

  constructor(private readonly options: PublisherBumpsOptions) {
    this.partitions = tierPartitions(options.redis, options.tableName);
    this.redis = defineBump(
      openRedis(options.redis, {
        role: 'response-cache-bumps',
        log: options.log,
        commandTimeoutMs: options.timeoutMs ?? BUMP_TIMEOUT_MS,
      }),
    );
  }

  /** Connects; resolves once connected or after `waitMs` (it keeps reconnecting). */
  async start(waitMs = 2000): Promise<void> {
    await connectWithin(this.redis.connect(), waitMs);
  }

  async stop(): Promise<void> {
    await closeAll([this.redis]);
  }

  /** Bumps `tags` everywhere; resolves whether Redis took all of it. Never rejects. */
  async bump(tags: readonly string[]): Promise<boolean> {
    if (tags.length === 0) return true;
    try {
      await bumpPartitions(this.redis, this.partitions, tags, this.options.tagTtlMs);
      return true;
    } catch {
      this.failed++;
      return false;
    }
  }
}

/**
 * A stream reader's bumps, connected, when it has Redis (`redis`) and the instances keep a shared
 * tier (`tagTtlMs`: RESPONSE_CACHE_MAX_AGE, none when RESPONSE_CACHE or RESPONSE_CACHE_SHARED is
 * off); else none, and the instances bump what they hear.
 */
export async function startPublisherBumps(options: {
  redis: RedisSettings | undefined;
  tagTtlMs: number | undefined;
  tableName: string;
  log: Pick<Logger, 'warn' | 'debug'>;
}): Promise<PublisherBumps | undefined> {
  const { redis, tagTtlMs } = options;
  if (!redis || tagTtlMs === undefined) return undefined;
  const bumps = new PublisherBumps({ redis, tagTtlMs, tableName: options.tableName, log: options.log });
  await bumps.start();
  return bumps;
}
