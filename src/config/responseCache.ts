import { integer, oneOf, seconds } from './read.js';
import type { Env } from './read.js';

/** RESPONSE_CACHE_* (docs/caching.md). */
export interface ResponseCacheConfig {
  maxBytes: number;
  maxAgeSeconds: number;
  indexHoldMs: number;
  /** Also keep answers in Redis (only with REDIS_URL). */
  shared: boolean;
}

/** The response cache; undefined when RESPONSE_CACHE=off or RESPONSE_CACHE_MAX_AGE=0. */
export function readResponseCache(env: Env): { responseCache: ResponseCacheConfig | undefined } {
  const on = oneOf(env, 'RESPONSE_CACHE') === 'on';
  const cache = {
    maxBytes: integer(env, 'RESPONSE_CACHE_MAX_BYTES'),
    maxAgeSeconds: seconds(env, 'RESPONSE_CACHE_MAX_AGE'),
    indexHoldMs: integer(env, 'RESPONSE_CACHE_INDEX_HOLD_MS'),
    shared: oneOf(env, 'RESPONSE_CACHE_SHARED') === 'on',
  };
  return { responseCache: on && cache.maxAgeSeconds > 0 ? cache : undefined };
}

/** What a stream reader that publishes invalidations over Redis needs to bump the shared tier first. */
export interface SharedBumpsConfig {
  /** How long a bumped tag's version is kept: the instances' maximum age (RESPONSE_CACHE_MAX_AGE). */
  tagTtlMs: number;
}

/**
 * The shared tier's bumps of a stream reader (`npm run consumer`, the stream Lambda): on unless
 * RESPONSE_CACHE=off, RESPONSE_CACHE_SHARED=off or RESPONSE_CACHE_MAX_AGE=0 say the instances
 * keep no shared tier (then the instances bump what they hear, as when a bump fails).
 */
export function readSharedBumps(env: Env): { sharedBumps: SharedBumpsConfig | undefined } {
  const on = oneOf(env, 'RESPONSE_CACHE') === 'on' && oneOf(env, 'RESPONSE_CACHE_SHARED') === 'on';
  const maxAgeSeconds = seconds(env, 'RESPONSE_CACHE_MAX_AGE');
  return { sharedBumps: on && maxAgeSeconds > 0 ? { tagTtlMs: maxAgeSeconds * 1000 } : undefined };
}
