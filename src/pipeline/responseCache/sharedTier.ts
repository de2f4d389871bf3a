/**
 * The shared tier of the response cache: answers kept in Redis, read by every instance on a miss
 * in its own memory (scale-out mode, REDIS_URL with RESPONSE_CACHE_SHARED=on).
 *
 * Nothing is evicted from Redis by key: invalidation is by **tag versions**. The tier is cut
 * into partitions (one on a single node, CLUSTER_PARTITIONS in a cluster), each with a hash tag
 * of its own (src/events/redisNames.ts), so every script runs in one slot and the partitions
 * spread over a cluster's primaries; an entry lives in the partition its key hashes to. In each
 * partition one counter (`<prefix>seq`) numbers invalidations, and a tag's key
 * (`<prefix>t:<tag>`) holds the number and wall-clock time of its last one (`<seq>:<ms>`): a
 * bump moves every partition. An entry records the counter as it was before
 * its execution began, and is valid only while every one of its tags still has a key with a
 * number no higher. So an entry is dead the moment any instance bumps one of its tags, an answer
 * whose read raced a change is dead on arrival, and an entry is never revived: a tag key that is
 * missing (expired, or evicted by `maxmemory`) makes every entry under it invalid, and is
 * recreated at the current counter, refusing the entry being stored if the counter moved.
 *
 * What is read from Redis is not trusted (sharedEntry.ts): an entry carries a MAC over its key,
 * tags, read mark, expiry and answer when REDIS_SIGNING_SECRET is set, and is refused past its
 * expiry or the maximum age. Tag versions are not signed; instead each instance remembers when
 * it last heard of each tag's change (within the maximum age) and serves no entry read before
 * that, so an old entry written back with its tags' versions reset is refused all the same.
 *
 * Bounds: every key but the counter has a TTL (an entry: what remains of the maximum age from
 * the start of its execution, or the end of an index hold-down; a tag: the maximum age, renewed
 * by each store), so a Redis with `maxmemory-policy volatile-lru` bounds the total; an entry is
 * at most `maxEntryBytes`.
 *
 * Who bumps (tagBumps.ts): the publisher of an invalidation, once, before its message goes out
 * (this tier's `bump` for the mutations of this instance, whose answer does not wait for it; it
 * skips this tier while one of them is in flight). An instance that hears a message saying so
 * only remembers the change (`heardBumped`); one that does not say so (the publisher's bump
 * failed or was late, or it has no tier) it bumps itself (`bump`), skipping this tier until done.
 * An entry whose look-up was under way when this instance heard of a change of one of its tags
 * is not served: Redis may have read it before the bump.
 *
 * Redis errors never fail a request: a read that fails or takes longer than `timeoutMs` is a
 * miss, a store that fails or takes as long is counted. A bump has a longer bound of its own,
 * `bumpTimeoutMs` (the connection's command timeout; reads and stores are cut shorter per
 * call): no request waits on it and this instance skips the tier while it is pending, so a bump
 * Redis answers late is a bump that worked. A bump that fails leaves entries this instance
 * knows are stale looking valid, so it serves none read before the failure, as after a feed gap,
 * and tells `onBumpFailed` (the cache bypasses until its feed proves Redis answers again).
 * Those read times are wall clocks of different instances: their skew adds to that bound.
 */
import type { Logger } from 'pino';
import { answerWithin, closeAll, connectWithin, openRedis } from '../../events/redisConnection.js';
import type { RedisSettings } from '../../events/redisConnection.js';
import { RefusalCounter } from '../../events/signedEnvelope.js';
import { decodeEntry, encodeEntry, isCurrent } from './sharedEntry.js';
import { READ, STORE } from './sharedScripts.js';
import { BUMP_TIMEOUT_MS, bumpPartitions, defineBump, tierPartitions } from './tagBumps.js';
import type { Bumping, Partition } from './tagBumps.js';
import type { ReadMark, SharedEntry } from './sharedEntry.js';

export type { ReadMark, SharedEntry } from './sharedEntry.js';
export { BUMP_TIMEOUT_MS, CLUSTER_PARTITIONS } from './tagBumps.js';

/** A valid entry read from Redis. */
export interface SharedHit extends SharedEntry {
  /** Date.now() when its execution began. */
  readStartedAt: number;
  /** How long Redis still keeps it, in ms. */
  ttlMs: number;
}

export interface SharedTierOptions {
  redis: RedisSettings;
  tableName: string;
  maxAgeMs: number;
  holdDownMs: number;
  maxEntryBytes: number;
  /** Which tags name a range of a global index (their answers are held down). */
  isIndexTag: (tag: string) => boolean;
  log: Logger;
  /** A read slower than this is a miss (and a store is dropped). */
  timeoutMs?: number;
  /** A bump slower than this failed. */
  bumpTimeoutMs?: number;
  /** Tags whose last change this instance remembers at most (past it, it serves nothing read before the oldest). */
  maxHeardTags?: number;
}

export interface SharedTierStats {
  hits: number;
  misses: number;
  /** Entries found but invalid (a bumped or missing tag, written before a gap or a change heard here). */
  invalid: number;
  stores: number;
  /** Stores Redis refused (a tag changed while read). */
  refused: number;
  errors: number;
}

/** How long a read may take (a request waits on it): past it, a miss. */
export const READ_TIMEOUT_MS = 250;

/** The partition a cache key lives in: FNV-1a of the key, mixed (its low bits alone depend on the characters' low bits). */
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return ((hash ^ (hash >>> 16)) >>> 0) % partitions;
}

type Scripted = Bumping & {
  tgRead(key: string, counterKey: string, tagPrefix: string): Promise<[string, string, number, ...string[]]>;
  tgStore(entryKey: string, counterKey: string, ...args: (string | number)[]): Promise<number>;
};

export class SharedTier {
  private readonly redis: Scripted;
  private readonly partitions: Partition[];
  private readonly timeoutMs: number;
  private readonly maxHeardTags: number;
  private pendingBumps = 0;
  /** Date.now() of this instance's last feed gap or failed bump: entries read before it are not served. */
  private floor = -Infinity;
  /** Tag -> Date.now() when this instance last heard of its change, oldest first (re-inserted on update). */
  private readonly heard = new Map<string, number>();
  private readonly bumpFailedListeners = new Set<() => void>();
  readonly stats: SharedTierStats = { hits: 0, misses: 0, invalid: 0, stores: 0, refused: 0, errors: 0 };
  /** Entries refused for what they are (unsigned, forged, untagged, expired, malformed), by reason. */
  readonly refusals: RefusalCounter;

  constructor(private readonly options: SharedTierOptions) {
    this.partitions = tierPartitions(options.redis, options.tableName);
    this.timeoutMs = options.timeoutMs ?? READ_TIMEOUT_MS;
    this.maxHeardTags = options.maxHeardTags ?? 100_000;
    this.refusals = new RefusalCounter('shared cache entries in redis', options.log);
    const redis = defineBump(
      openRedis(options.redis, {
        role: 'response-cache',
        log: options.log,
        // The longest bound of any call here (a bump's); reads and stores are cut shorter each.
        commandTimeoutMs: Math.max(options.bumpTimeoutMs ?? BUMP_TIMEOUT_MS, this.timeoutMs),
      }),
    );
    redis.defineCommand('tgRead', { numberOfKeys: 2, lua: READ });
    redis.defineCommand('tgStore', { numberOfKeys: 2, lua: STORE });
    this.redis = redis as Scripted;
  }

  /** Connects; resolves once connected or after `waitMs` (it keeps reconnecting). */
  async start(waitMs = 2000): Promise<void> {
    await connectWithin(this.redis.connect(), waitMs);
  }

  async stop(): Promise<void> {
    await closeAll([this.redis]);
  }

  /** Whether the tier can be read now: connected, and no bump of this instance in flight. */
  get readable(): boolean {
    return this.redis.status === 'ready' && this.pendingBumps === 0;
  }

  /**
   * The valid entry at `key` if there is one (`hit`), else the mark an execution that begins now
   * stores its answer under (`mark`; none when the tier cannot be used now). Never rejects.
   */
  async get(key: string): Promise<{ hit?: SharedHit; mark?: ReadMark }> {
    if (this.redis.status !== 'ready') return {};
    const at = Date.now();
    const { prefix, counterKey, tagPrefix } = this.partitionOf(key);
    let found: [string, string, number, ...string[]];
    try {
      found = await answerWithin(this.redis.tgRead(prefix + key, counterKey, tagPrefix), this.timeoutMs);
    } catch {
      this.stats.errors++;
      return {};
    }
    const [seq, text, ttlMs, ...versions] = found;
    const mark = { seq: Number(seq), at };
    if (text === '') {
      this.stats.misses++;
      return { mark };
    }
    const decoded = decodeEntry(prefix + key, text, {
      secret: this.options.redis.signingSecret,
      now: Date.now(),
      maxAgeMs: this.options.maxAgeMs,
    });
    if ('refused' in decoded) {
      this.refusals.count(decoded.refused, { key: prefix + key });
      return { mark };
    }
    const { entry } = decoded;
    // Since `at`, a change heard of or a gap (a widened invalidation moves no tag version):
    // Redis may have read the entry before it, and the answer arrived after it, whatever the
    // clock of the entry's writer says of its read; and `readable` again: a bump of this instance
    // may have begun meanwhile. `at` and what it is compared with are this instance's clock.
    const since = Math.min(entry.mark.at, at);
    if (
      since <= this.floor ||
      this.heardSince(entry.tags, since) ||
      !isCurrent(entry.mark, versions) ||
      !this.readable
    ) {
      this.stats.invalid++;
      return { mark };
    }
    this.stats.hits++;
    const hit = {
      json: entry.json,
      etag: entry.etag,
      tags: entry.tags,
      public: entry.public,
      readStartedAt: entry.mark.at,
      // No TTL in Redis (-1) is not a licence: the signed expiry bounds it.
      ttlMs: ttlMs > 0 ? Math.min(ttlMs, entry.expiresAt - Date.now()) : entry.expiresAt - Date.now(),
    };
    return { hit, mark };
  }

  /**
   * Stores an answer whose execution began at `mark`; `readIndex`: it read a global index. Never
   * rejects; Redis refuses it when one of its tags changed after `mark`.
   */
  async set(key: string, entry: SharedEntry, mark: ReadMark, readIndex: boolean): Promise<void> {
    const now = Date.now();
    const expiresAt = mark.at + this.options.maxAgeMs;
    const ttl = Math.floor(expiresAt - now);
    if (ttl <= 0 || mark.at <= this.floor || entry.tags.length === 0) return;
    const { prefix, counterKey, tagPrefix } = this.partitionOf(key);
    const text = encodeEntry(prefix + key, entry, mark, expiresAt, this.options.redis.signingSecret);
    if (Buffer.byteLength(text) > this.options.maxEntryBytes) return;
    const tagArgs = entry.tags.flatMap((tag) => [tag, readIndex && this.options.isIndexTag(tag) ? '1' : '0']);
    try {
      const stored = await answerWithin(
        this.redis.tgStore(
          prefix + key,
          counterKey,
          tagPrefix,
          text,
          mark.seq,
          ttl,
          this.options.maxAgeMs,
          this.options.holdDownMs,
          ...tagArgs,
        ),
        this.timeoutMs,
      );
      if (stored > 0) this.stats.stores++;
      else this.stats.refused++;
    } catch {
      this.stats.errors++;
    }
  }

  /**
   * Invalidates `tags` for every instance, in every partition. Never rejects: resolves true once
   * Redis took the bump everywhere, false when any part failed or took longer than the bump's
   * bound (then this instance serves nothing read before now, and tells
   * `onBumpFailed`). Until it is done this instance does not read the tier.
   */
  async bump(tags: readonly string[]): Promise<boolean> {
    if (tags.length === 0) return true;
    const now = Date.now();
    this.remember(tags, now);
    this.pendingBumps++;
    try {
      await bumpPartitions(this.redis, this.partitions, tags, this.options.maxAgeMs);
      return true;
    } catch {
      // Entries under `tags` may still look valid: none read before now is served here.
      this.stats.errors++;
      this.gap(now);
      for (const listener of this.bumpFailedListeners) listener();
      return false;
    } finally {
      this.pendingBumps--;
    }
  }

  /**
   * This instance heard of a change of `tags` whose publisher bumped them before publishing it:
   * nothing to send, but entries read before now are not served here (the versions in Redis are
   * not signed: one written back to an older value must not revive them).
   */
  heardBumped(tags: readonly string[]): void {
    this.remember(tags, Date.now());
  }

  private partitionOf(key: string): Partition {
    return this.partitions[partitionOf(key, this.partitions.length)] as Partition;
  }

  /** Calls `listener` after each bump that failed. */
  onBumpFailed(listener: () => void): void {
    this.bumpFailedListeners.add(listener);
  }

  /** This instance's feed had a gap: invalidations may have been lost, entries read before now are not served. */
  gap(at = Date.now()): void {
    this.floor = Math.max(this.floor, at);
  }

  /**
   * Whether this instance heard of a change of one of `tags` at or after `since` (an entry's
   * read began then, or this instance's look-up of it).
   */
  private heardSince(tags: readonly string[], since: number): boolean {
    for (const tag of tags) {
      const at = this.heard.get(tag);
      if (at !== undefined && at >= since) return true;
    }
    return false;
  }

  /** Remembers when `tags` changed, for the maximum age; a flood forgets the oldest and raises the floor past them. */
  private remember(tags: readonly string[], now: number): void {
    for (const tag of tags) {
      this.heard.delete(tag);
      this.heard.set(tag, now);
    }
    for (const [tag, at] of this.heard) {
      if (now - at > this.options.maxAgeMs) this.heard.delete(tag);
      else if (this.heard.size > this.maxHeardTags) {
        this.heard.delete(tag);
        this.gap(at);
      } else break;
    }
  }
}
