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
