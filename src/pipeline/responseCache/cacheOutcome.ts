/**
 * What the response cache did for one execution (`CacheOutcome`: `extensions.cache`, the
 * Cache-Tag headers, the ETag), its counters, and how a hit's answer is made from its entry.
 */
import type { ExecutionResult } from 'graphql';
import { withKnownJson } from '../responseSize.js';

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
  /** Bumps of the shared tier that failed (each a gap in the feed). */
  failedBumps: number;
  /** Heartbeats the lease table did not confirm (not taken as proof of a live feed). */
  unvouchedBeats: number;
}

/** A hit's `data`, parsed from the entry's text, which the response then reuses (responseSize.ts). */
export function dataOf(json: string): ExecutionResult['data'] {
  const data = JSON.parse(json) as ExecutionResult['data'];
  return typeof data === 'object' && data !== null ? withKnownJson(data, json) : data;
}

/** `result` with `extensions.cache` when `explain` (the transports ask for it in development only). */
export function explained(result: ExecutionResult, outcome: CacheOutcome, explain: boolean): ExecutionResult {
  if (!explain) return result;
  const cache = {
    status: outcome.status,
    ...(outcome.ageMs === undefined ? {} : { age: Math.round(outcome.ageMs) / 1000 }),
    ...(outcome.tier ? { tier: outcome.tier } : {}),
    ...(outcome.reason ? { reason: outcome.reason } : {}),
  };
  return { ...result, extensions: { ...result.extensions, cache } };
}
