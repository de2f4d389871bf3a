/**
 * The response cache: answers kept until the table changes what they read, whoever changes it.
 * The request core (serve.ts) asks it after admission and before execution, for every transport,
 * so a hit passes every limit and authorization rule a miss passes, and then costs no execution.
 *
 * - Only queries are cached, and only answers without errors whose every read was named by a
 *   dependency tag (src/db/dependencyRecord.ts). Mutations and subscriptions run as ever; a
 *   mutation evicts the tags of what it touched before its answer leaves (read-your-writes on
 *   the writing instance, `wrote`) and hands them to `onWrite` (the other instances, the CDN).
 * - The key is the document's hash, the operation name, the canonical variables and the scope:
 *   `public` when the document reads only the catalog (and every read says so), else the
 *   viewer and role. Nothing read under one viewer is served to another.
 * - It serves and stores only while its invalidation feed is live (invalidationFeed.ts); a gap
 *   flushes it. Invalidations come in through `invalidate` (stream records turned into tags) and
 *   `invalidateWide` (the kinds of tags the bus could not take as they were, or everything).
 * - Every entry's age counts from the start of the execution that produced it, in every tier,
 *   and no entry older than `maxAgeMs` is served: the bound behind any lost invalidation.
 *   `extensions.cache.age` is that age. An answer that read nothing (no tag) is not stored.
 * - An entry holds its answer's `data` as JSON text, which a hit writes as it is, and the
 *   compressed bodies of its hits once a transport made them (`keepEncoded`), counted in its size.
 * - With a shared tier (sharedTier.ts, Redis), a miss here is looked up there before executing,
 *   a stored answer is written there too, and every invalidation's tags are bumped there once,
 *   by its publisher (tagBumps.ts): this instance bumps its mutations' tags, and those of an
 *   invalidation it hears only when the message says its publisher did not. A mutation does
 *   not wait for its bump (a hung Redis must not hold writes up): the bump is sent before the
 *   answer leaves, and one that fails is a gap in this instance's feed (it bypasses until Redis
 *   answers again, then flushes).
 */
import { etagOf } from './cacheKey.js';
import type { GraphQLSchema } from 'graphql';
import type { ExecutionResult } from 'graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { isPublicTag } from '../../table/dependencies.js';
import type { CacheOutcome, ResponseCacheStats } from './cacheOutcome.js';
import { EntryStore } from './entryStore.js';
import type { CacheEntry } from './entryStore.js';
import { InvalidationFeed } from './invalidationFeed.js';
import type { ReadMark, SharedTier } from './sharedTier.js';

export type { CacheOutcome, CacheStatus, ResponseCacheStats } from './cacheOutcome.js';

export { FEED_TIMEOUT_MS } from './invalidationFeed.js';

export interface ResponseCacheOptions {
  schema: GraphQLSchema;
  maxBytes: number;
  maxAgeMs: number;
  /** How long after an index tag's invalidation answers read from that index are not stored. */
  holdDownMs: number;
  /** How long without proof of a working feed the cache bypasses (it notices a dead feed this fast). */
  feedTimeoutMs: number;
  /** How many partitions of the feed must each beat (the invalidation channels on Redis; default 1). */
  feedPartitions?: number | undefined;
  /** Answers larger than this are not stored (they are refused anyway: MAX_RESPONSE_BYTES). */
  maxAnswerBytes: number;
  /** Public tags of every invalidation (the CDN purge hook). */
  onPublicInvalidation?: ((tags: readonly string[]) => void) | undefined;
  /** The tier in Redis shared by every instance (scale-out mode). */
  shared?: SharedTier | undefined;
}

export type ResponseCache = ReturnType<typeof createResponseCache>;

/** Told a mutation's tags, and its bump in the shared tier (true once Redis took it, false when it failed; none without a tier). */
export type WriteListener = (tags: readonly string[], bumped: Promise<boolean> | undefined) => void;

/** A stored answer found for a request: its entry (the store's, not a copy) and what the cache did. */
export interface CacheHit {
  status: 'hit';
  key: string;
  entry: CacheEntry;
  outcome: CacheOutcome;
}

/** No answer to serve: execute, then `store` what the execution read (unless the cache bypassed). */
export interface CacheMiss {
  status: 'miss' | 'bypass';
  key: string;
  outcome: CacheOutcome;
  /** performance.now() before the execution: the stored answer's age counts from here. */
  readAt: number;
  /** The shared tier's mark of the look-up (a write there is refused if the entry changed since). */
  mark?: ReadMark | undefined;
}

export function createResponseCache(options: ResponseCacheOptions) {
  const stats: ResponseCacheStats = {
    hits: 0,
    misses: 0,
    bypasses: 0,
    evictions: 0,
    notStored: {},
    widened: 0,
    publisherLosses: 0,
    failedBumps: 0,
    unvouchedBeats: 0,
  };
  const lagObservers = new Set<(seconds: number) => void>();
  const writeListeners = new Set<WriteListener>();
  const entries = new EntryStore({
    maxBytes: options.maxBytes,
    maxAgeMs: options.maxAgeMs,
    holdDownMs: options.holdDownMs,
    onEvicted: (count) => (stats.evictions += count),
  });
  const { shared } = options;
  const feed = new InvalidationFeed({
    timeoutMs: options.feedTimeoutMs,
    partitions: options.feedPartitions,
    onGap: () => {
      entries.flush();
      shared?.gap();
    },
  });
  // A bump that failed leaves entries in Redis that other instances may take: a gap here too.
  shared?.onBumpFailed(() => {
    stats.failedBumps++;
    feed.down();
  });
  const notStored = (reason: string) => {
    stats.notStored[reason] = (stats.notStored[reason] ?? 0) + 1;
    return reason;
  };

  const observeLag = (createdAtMs: number | undefined) => {
    if (createdAtMs === undefined) return;
    const lag = Math.max(0, (Date.now() - createdAtMs) / 1000);
    for (const observe of lagObservers) observe(lag);
  };

  /** Evicts `tags` from this instance's memory; returns how many entries went. */
  function evict(tags: readonly string[], createdAtMs: number | undefined): number {
    const evicted = entries.invalidate(tags);
    observeLag(createdAtMs);
    const publicTags = tags.filter(isPublicTag);
    if (publicTags.length > 0) options.onPublicInvalidation?.(publicTags);
    return evicted;
  }

  /**
   * Evicts `tags` here; returns how many entries went here. `bumped`: the invalidation's
   * publisher bumped them in the shared tier before it was sent, so this instance only
   * remembers the change there; otherwise it bumps them itself (never waited for).
   */
  function invalidate(tags: readonly string[], createdAtMs?: number, bumped = false): number {
    const evicted = evict(tags, createdAtMs);
    if (shared) {
      if (bumped) shared.heardBumped(tags);
      else void shared.bump(tags);
    }
    return evicted;
  }

  /**
   * Evicts every entry filed under a tag of one of `kinds`, or everything: what a tag the bus
   * could not take as it was may concern. The shared tier cannot find entries by kind: this
   * instance serves none from it read before now.
   */
  function invalidateWide(
    { kinds, everything, lost }: { kinds: readonly string[]; everything: boolean; lost?: true | undefined },
    createdAtMs?: number,
  ): number {
    if (!everything && kinds.length === 0) return 0;
    if (lost) stats.publisherLosses++;
    else stats.widened++;
    const before = entries.size;
    if (everything) entries.flush();
    else entries.invalidateKinds(kinds);
    shared?.gap();
    observeLag(createdAtMs);
    return before - entries.size;
  }

  /**
   * The answer stored under `key`, from this instance or the shared tier; or a miss (execute, then
   * `store`), or a bypass (the feed is down: execute, store nothing).
   */
  async function lookup(key: string): Promise<CacheHit | CacheMiss> {
    if (!feed.live) {
      stats.bypasses++;
      const outcome: CacheOutcome = { status: 'bypass', reason: 'invalidation feed down', tags: [], public: false };
      return { status: 'bypass', key, outcome, readAt: performance.now() };
    }
    const now = performance.now();
    const entry = entries.get(key, now);
    if (entry) {
      stats.hits++;
      const outcome: CacheOutcome = {
        status: 'hit',
        ageMs: now - entry.readAt,
        tags: entry.tags,
        public: entry.public,
        etag: entry.etag,
        tier: 'local',
      };
      return { status: 'hit', key, entry, outcome };
    }
    let mark: ReadMark | undefined;
    if (shared?.readable) {
      const { hit: found, mark: readMark } = await shared.get(key);
      mark = readMark;
      const ageMs = found ? Math.max(0, Date.now() - found.readStartedAt) : Infinity;
      // Checked again: the feed may have died while Redis answered, and the entry aged.
      if (found && feed.live && ageMs <= options.maxAgeMs) {
        const adopted: CacheEntry = {
          json: found.json,
          tags: found.tags,
          public: found.public,
          etag: found.etag,
          readAt: performance.now() - ageMs,
        };
        entries.adopt(key, adopted, found.ttlMs);
        stats.hits++;
        const outcome: CacheOutcome = {
          status: 'hit',
          ageMs,
          tags: found.tags,
          public: found.public,
          etag: found.etag,
          tier: 'shared',
        };
        return { status: 'hit', key, entry: adopted, outcome };
      }
    }
    stats.misses++;
    return {
      status: 'miss',
      key,
      outcome: { status: 'miss', tags: [], public: false },
      readAt: performance.now(),
      mark,
    };
  }

  /**
   * Files the answer of a miss's execution under its key when it may be kept: no errors, every
   * read named by a tag, a public document's reads all public, the feed live, under the size
   * bound. Answers what the cache did, and the JSON of the answer's `data` when it made it (the
   * report writes it into the body instead of serializing the data again).
   */
  function store(
    miss: CacheMiss,
    /** With the JSON of its `data` when the executor wrote the answer as JSON (the planned executor does): stored as it is. */
    result: ExecutionResult & { readonly dataJson?: string | undefined },
    context: Pick<GraphQLContext, 'reads'>,
    readsOnlyPublicData: boolean,
  ): { outcome: CacheOutcome; dataJson?: string } {
    if (miss.status === 'bypass') return { outcome: miss.outcome };
    const outcome: CacheOutcome = { status: 'miss', tags: [], public: false };
    const { reads } = context;
    const tags = [...reads.tags];
    const isPublic = readsOnlyPublicData && tags.every(isPublicTag);
    let refusal: string | undefined;
    let dataJson: string | undefined;
    if (result.errors?.length) refusal = 'errors';
    else if (reads.uncacheable) refusal = 'unnamed read';
    else if (tags.length === 0) refusal = 'nothing read';
    else if (readsOnlyPublicData && !isPublic) refusal = 'private read in a public document';
    else if (!feed.live) refusal = 'invalidation feed down';
    else {
      const json = (dataJson = result.dataJson ?? JSON.stringify(result.data ?? null));
      if (Buffer.byteLength(json) > options.maxAnswerBytes) refusal = 'too-large';
      else {
        const etag = etagOf(json);
        refusal = entries.set(miss.key, { json, tags, public: isPublic, etag, readAt: miss.readAt }, reads.readIndex);
        if (!refusal) {
          Object.assign(outcome, { tags, public: isPublic, etag });
          if (shared && miss.mark) {
            void shared.set(miss.key, { json, etag, tags, public: isPublic }, miss.mark, reads.readIndex);
          }
        }
      }
    }
    if (refusal) outcome.reason = `not stored: ${notStored(refusal)}`;
    return dataJson === undefined ? { outcome } : { outcome, dataJson };
  }

  /**
   * After a mutation: evicts the tags of what it wrote here and bumps them in the shared tier
   * before its answer leaves, and hands them to `onWrite` listeners with the bump's outcome.
   */
  function wrote(tags: readonly string[]): void {
    if (tags.length === 0) return;
    // The bump is on its way to Redis before the answer leaves (ioredis writes a command as it
    // is called), and Redis runs commands in the order they arrive: a read another instance
    // sends once the writer has its answer comes after it. Not waiting for it keeps a hung
    // Redis from holding writes up; one that fails is a gap (onBumpFailed above). The other
    // instances hear of the write once it is done (or failed): they need not bump it again.
    evict(tags, undefined);
    const bumped = shared?.bump(tags);
    for (const listener of writeListeners) listener(tags, bumped);
  }

  return {
    /** The schema the cache's documents are checked against: the pipeline runs on this one. */
    schema: options.schema,
    lookup,
    store,
    wrote,
    /** Keeps a compressed body of a hit with its entry (counted in its size), when the entry is still held. */
    keepEncoded: (key: string, entry: CacheEntry, label: string, bytes: Buffer): void =>
      entries.keep(key, entry, label, bytes),
    invalidate,
    invalidateWide,
    feed,
    stats,
    flush: () => entries.flush(),
    /** The shared tier (undefined: this instance's memory only). */
    shared,
    get entries() {
      return entries.size;
    },
    get bytes() {
      return entries.bytes;
    },
    /**
     * Calls `listener` with the tags of each mutation's writes, after the local eviction (to
     * reach the other instances), and whether the shared tier took their bump.
     */
    onWrite(listener: WriteListener): void {
      writeListeners.add(listener);
    },
    /** Calls `observe` with each invalidation's lag (seconds from the change to the eviction here). */
    onLag(observe: (seconds: number) => void): () => void {
      lagObservers.add(observe);
      return () => lagObservers.delete(observe);
    },
  };
}
