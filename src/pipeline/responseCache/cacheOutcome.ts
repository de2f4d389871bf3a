/**
 * What the response cache did for one execution (`CacheOutcome`: `extensions.cache`, the
 * Cache-Tag headers, the ETag) and its counters.
 */

export type CacheStatus = 'hit' | 'miss' | 'bypass';

/** What the cache did for one execution: `extensions.cache`, the Cache-Tag headers, the ETag. */
export interface CacheOutcome {
  status: CacheStatus;
  /** Why it bypassed, or why a miss was not stored. */
  reason?: string | undefined;
  /** Age of the entry served (hit), in ms: since its execution began, at most the maximum age. */
  ageMs?: number | undefined;
  /** Where a hit came from: this instance's memory or the shared tier. */
  tier?: 'local' | 'shared' | undefined;
  /** The entry's tags (hit, or a stored miss). */
  tags: readonly string[];
  public: boolean;
  etag?: string | undefined;
}

export interface ResponseCacheStats {
  hits: number;
  misses: number;
  bypasses: number;
  evictions: number;
  /** Misses that were not stored, by reason. */
  notStored: Record<string, number>;
  /** Invalidations widened to whole kinds of tags, or to everything. */
  widened: number;
  /** Flushes a publisher asked for because a message of it was lost before (its `lost` word). */
  publisherLosses: number;
  /** Bumps of the shared tier that failed (each a gap in the feed). */
  failedBumps: number;
  /** Heartbeats the lease table did not confirm (not taken as proof of a live feed). */
  unvouchedBeats: number;
}
