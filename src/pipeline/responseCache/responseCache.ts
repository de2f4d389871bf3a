/**
 * The response cache: answers kept until the table changes what they read, whoever changes it.
 * It wraps the pipeline's executor (execution.ts `run`), so every transport that executes
 * through the pipeline (HTTP, Lambda, WebSocket queries) is served by it the same way.
 *
 * - Only queries are cached, and only answers without errors whose every read was named by a
 *   dependency tag (src/db/dependencyRecord.ts). Mutations and subscriptions run as ever; a
 *   mutation evicts the tags of what it touched before its answer leaves (read-your-writes on
 *   the writing instance) and hands them to `onWrite` (the other instances, the CDN).
 * - The key is the document's hash, the operation name, the canonical variables and the scope:
 *   `public` when the document reads only the catalog (and every read says so), else the
 *   viewer and role. Nothing read under one viewer is served to another.
 * - It serves and stores only while its invalidation feed is live (invalidationFeed.ts); a gap
 *   flushes it. Invalidations come in through `invalidate` (stream records turned into tags) and
 *   `invalidateWide` (the kinds of tags the bus could not take as they were, or everything).
 * - Every entry's age counts from the start of the execution that produced it, in every tier,
 *   and no entry older than `maxAgeMs` is served: the bound behind any lost invalidation.
 *   `extensions.cache.age` is that age. An answer that read nothing (no tag) is not stored.
 * - With a shared tier (sharedTier.ts, Redis), a miss here is looked up there before executing,
 *   a stored answer is written there too, and every invalidation bumps its tags there. A
 *   mutation does not wait for its bump (a hung Redis must not hold writes up): the bump is
 *   sent before the answer leaves, and one that fails is a gap in this instance's feed (it
 *   bypasses until Redis answers again, then flushes).
 */
import { etagOf } from '../httpCaching.js';
import { withKnownJson } from '../responseSize.js';
import { OperationTypeNode } from 'graphql';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { GraphQLSchema } from 'graphql';
import { settled } from '../../db/capacity.js';
import type { GraphQLContext } from '../../graphql/context.js';
import { isPublicTag } from '../../table/dependencies.js';
import { cacheKeyOf, scopeOf } from './cacheKey.js';
import { dataOf, explained } from './cacheOutcome.js';
import type { CacheOutcome, ResponseCacheStats } from './cacheOutcome.js';
import { documentFactsOf } from './documentFacts.js';
import { EntryStore } from './entryStore.js';
import type { CacheEntry } from './entryStore.js';
import { InvalidationFeed } from './invalidationFeed.js';
import type { ReadMark, SharedTier } from './sharedTier.js';

export type { CacheOutcome, CacheStatus, ResponseCacheStats } from './cacheOutcome.js';

/** How long an instance serves without proof that invalidations reach it: it notices a dead feed this fast. */
export const FEED_TIMEOUT_MS = 5000;

export interface ResponseCacheOptions {
  schema: GraphQLSchema;
  maxBytes: number;
  maxAgeMs: number;
  /** How long after an index tag's invalidation answers read from that index are not stored. */
  holdDownMs: number;
  /** How long without proof of a working feed the cache bypasses (it notices a dead feed this fast). */
  feedTimeoutMs: number;
  /** Answers larger than this are not stored (they are refused anyway: MAX_RESPONSE_BYTES). */
  maxAnswerBytes: number;
  /** Public tags of every invalidation (the CDN purge hook). */
  onPublicInvalidation?: ((tags: readonly string[]) => void) | undefined;
  /** The tier in Redis shared by every instance (scale-out mode). */
  shared?: SharedTier | undefined;
}

type Run = (args: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult;

export type ResponseCache = ReturnType<typeof createResponseCache>;

export function createResponseCache(options: ResponseCacheOptions) {
  const stats: ResponseCacheStats = {
    hits: 0,
    misses: 0,
    bypasses: 0,
    evictions: 0,
    notStored: {},
    widened: 0,
    failedBumps: 0,
    unvouchedBeats: 0,
  };
  const lagObservers = new Set<(seconds: number) => void>();
  const writeListeners = new Set<(tags: readonly string[]) => void>();
  const store = new EntryStore({
    maxBytes: options.maxBytes,
    maxAgeMs: options.maxAgeMs,
    holdDownMs: options.holdDownMs,
    onEvicted: (count) => (stats.evictions += count),
  });
  const { shared } = options;
  const feed = new InvalidationFeed({
    timeoutMs: options.feedTimeoutMs,
    onGap: () => {
      store.flush();
      shared?.gap();
    },
  });
  // A bump that failed leaves entries in Redis that other instances may take: a gap here too.
  shared?.onBumpFailed(() => {
    stats.failedBumps++;
    feed.down();
  });
  const factsOf = documentFactsOf(options.schema);
  const outcomes = new WeakMap<object, CacheOutcome>();

  const notStored = (reason: string) => {
    stats.notStored[reason] = (stats.notStored[reason] ?? 0) + 1;
    return reason;
  };

  const observeLag = (createdAtMs: number | undefined) => {
    if (createdAtMs === undefined) return;
    const lag = Math.max(0, (Date.now() - createdAtMs) / 1000);
    for (const observe of lagObservers) observe(lag);
  };

  /** Evicts `tags` here and bumps them in the shared tier (never waited for); returns how many entries went here. */
  function invalidate(tags: readonly string[], createdAtMs?: number): number {
    const evicted = store.invalidate(tags);
    if (shared) void shared.bump(tags);
    observeLag(createdAtMs);
    const publicTags = tags.filter(isPublicTag);
    if (publicTags.length > 0) options.onPublicInvalidation?.(publicTags);
    return evicted;
  }

  /**
   * Evicts every entry filed under a tag of one of `kinds`, or everything: what a tag the bus
   * could not take as it was may concern. The shared tier cannot find entries by kind: this
   * instance serves none from it read before now.
   */
  function invalidateWide(
    { kinds, everything }: { kinds: readonly string[]; everything: boolean },
    createdAtMs?: number,
  ): number {
    if (!everything && kinds.length === 0) return 0;
    stats.widened++;
    const before = store.size;
    if (everything) store.flush();
    else store.invalidateKinds(kinds);
    shared?.gap();
    observeLag(createdAtMs);
    return before - store.size;
  }

  /**
   * Executes `args` with `run`, through the cache. `explain` adds `extensions.cache` (the
   * transports ask for it in development only).
   */
  async function execute(args: ExecutionArgs, run: Run, explain = false): Promise<ExecutionResult> {
    const context = args.contextValue as GraphQLContext;
    const facts = factsOf(args.document);
    const type = facts.operationType(args.operationName);
    if (type === OperationTypeNode.MUTATION) {
      const result = await run(args);
      const tags = [...context.wrote];
      if (tags.length > 0) {
        // The bump is on its way to Redis before the answer leaves (ioredis writes a command as it
        // is called), and Redis runs commands in the order they arrive: a read another instance
        // sends once the writer has its answer comes after it. Not waiting for it keeps a hung
        // Redis from holding writes up; one that fails is a gap (onBumpFailed below).
        invalidate(tags);
        for (const listener of writeListeners) listener(tags);
      }
      return result;
    }
    if (type !== OperationTypeNode.QUERY) return run(args);
    const bypass = (reason: string) => {
      stats.bypasses++;
      const outcome: CacheOutcome = { status: 'bypass', reason, tags: [], public: false };
      outcomes.set(context, outcome);
      return outcome;
    };
    if (!feed.live) {
      const outcome = bypass('invalidation feed down');
      return explained(await run(args), outcome, explain);
    }
    const scope = scopeOf(facts.readsOnlyPublicData, context.viewer);
    const variables = args.variableValues as Record<string, unknown> | null | undefined;
    const key = cacheKeyOf(facts.hash, args.operationName, variables, scope);
    const now = performance.now();
    const entry = store.get(key, now);
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
      outcomes.set(context, outcome);
      return explained({ data: dataOf(entry.json) }, outcome, explain);
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
        store.adopt(key, adopted, found.ttlMs);
        stats.hits++;
        const outcome: CacheOutcome = {
          status: 'hit',
          ageMs,
          tags: found.tags,
          public: found.public,
          etag: found.etag,
          tier: 'shared',
        };
        outcomes.set(context, outcome);
        return explained({ data: dataOf(found.json) }, outcome, explain);
      }
    }

    stats.misses++;
    const readAt = performance.now();
    const result = await run(args);
    await settled(context.cost); // a prefetched page's read belongs to this answer's dependencies
    const outcome: CacheOutcome = { status: 'miss', tags: [], public: false };
    outcomes.set(context, outcome);
    const { reads } = context;
    const tags = [...reads.tags];
    const isPublic = facts.readsOnlyPublicData && tags.every(isPublicTag);
    let refusal: string | undefined;
    if (result.errors?.length) refusal = 'errors';
    else if (reads.uncacheable) refusal = 'unnamed read';
    else if (tags.length === 0) refusal = 'nothing read';
    else if (facts.readsOnlyPublicData && !isPublic) refusal = 'private read in a public document';
    else if (!feed.live) refusal = 'invalidation feed down';
    else {
      const json = JSON.stringify(result.data ?? null);
      if (result.data) withKnownJson(result.data, json);
      if (Buffer.byteLength(json) > options.maxAnswerBytes) refusal = 'too-large';
      else {
        const etag = etagOf(json);
        refusal = store.set(key, { json, tags, public: isPublic, etag, readAt }, reads.readIndex);
        if (!refusal) {
          Object.assign(outcome, { tags, public: isPublic, etag });
          if (shared && mark) void shared.set(key, { json, etag, tags, public: isPublic }, mark, reads.readIndex);
        }
      }
    }
    if (refusal) outcome.reason = `not stored: ${notStored(refusal)}`;
    return explained(result, outcome, explain);
  }

  return {
    /** The schema the cache's documents are checked against: the pipeline runs on this one. */
    schema: options.schema,
    execute,
    invalidate,
    invalidateWide,
    feed,
    stats,
    /** What the cache did for the execution of `context` (undefined when it did nothing). */
    outcomeOf: (context: object): CacheOutcome | undefined => outcomes.get(context),
    flush: () => store.flush(),
    /** The shared tier (undefined: this instance's memory only). */
    shared,
    get entries() {
      return store.size;
    },
    get bytes() {
      return store.bytes;
    },
    /** Calls `listener` with the tags of each mutation's writes, after the local eviction (to reach the other instances). */
    onWrite(listener: (tags: readonly string[]) => void): void {
      writeListeners.add(listener);
    },
    /** Calls `observe` with each invalidation's lag (seconds from the change to the eviction here). */
    onLag(observe: (seconds: number) => void): () => void {
      lagObservers.add(observe);
      return () => lagObservers.delete(observe);
    },
  };
}
