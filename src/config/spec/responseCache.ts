import type { VarSpec } from './varSpec.js';

/** The response cache (docs/caching.md). */
export const RESPONSE_CACHE_SPEC = {
  RESPONSE_CACHE: {
    type: ['on', 'off'],
    default: 'on',
    description:
      'keep query answers until the table changes what they read (evicted through the stream on every instance); served only while the invalidation feed is live; the GraphQL Lambda never caches (it has no feed)',
    readBy: ['server'],
  },
  RESPONSE_CACHE_MAX_BYTES: {
    type: 'integer',
    default: '67108864',
    description: 'bytes the cached answers of one instance may take (64 MiB); the least recently used go first',
    readBy: ['server'],
  },
  RESPONSE_CACHE_MAX_AGE: {
    type: 'seconds',
    default: '300',
    description: 'the oldest a cached answer may be, whatever the invalidations; `0` turns the cache off',
    readBy: ['server'],
  },
  RESPONSE_CACHE_INDEX_HOLD_MS: {
    type: 'integer',
    default: '1000',
    description:
      'after a change, how long answers read from a global index (eventually consistent) that it touched are kept at most (they expire when this hold-down ends)',
    readBy: ['server'],
  },
  RESPONSE_CACHE_SHARED: {
    type: ['on', 'off'],
    default: 'on',
    description:
      'with REDIS_URL: also keep answers in Redis (keys `tablegraph:rc:{<table>:p<partition>}:*`, each with a TTL), read by every instance on a miss in its own cache; give that Redis a `maxmemory` with the `volatile-lru` policy',
    readBy: ['server'],
  },
} as const satisfies Record<string, VarSpec>;
