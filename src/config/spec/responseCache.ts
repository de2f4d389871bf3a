import type { VarSpec } from './varSpec.js';

/** The response cache (docs/caching.md). */
export const RESPONSE_CACHE_SPEC = {
  RESPONSE_CACHE: {
    type: ['on', 'off'],
    default: 'on',
    description:
      'keep query answers until the table changes what they read (evicted through the stream on every instance); served only while the invalidation feed is live; the GraphQL Lambda never caches (it has no feed); `off` on a consumer or the stream Lambda: it does not bump the shared tier (the instances do)',
    readBy: ['server', 'consumer', 'stream-lambda'],
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
    description:
      'the oldest a cached answer may be, whatever the invalidations; `0` turns the cache off; on a consumer or the stream Lambda: how long the tag versions it bumps in the shared tier are kept',
    readBy: ['server', 'consumer', 'stream-lambda'],
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
      'with REDIS_URL: also keep answers in Redis (keys `tablegraph:rc:{<table>:p<partition>}:*`, each with a TTL), read by every instance on a miss in its own cache; give that Redis a `maxmemory` with the `volatile-lru` policy. A consumer or the stream Lambda bumps the tags of each invalidation there before publishing it (`off`: the instances bump them)',
    readBy: ['server', 'consumer', 'stream-lambda'],
  },
} as const satisfies Record<string, VarSpec>;
