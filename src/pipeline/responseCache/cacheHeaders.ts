/**
 * What the HTTP transports say of a cached answer. A public answer (one that may be stored by a
 * CDN: `Cache-Control: public`, httpCaching.ts) carries its dependency tags in `Cache-Tag`
 * (comma separated: Cloudflare, Akamai) and `Surrogate-Key` (space separated: Fastly), so the
 * CDN can purge it by tag when the purge hook names one, and its ETag is the cached answer's,
 * the same for the miss that stored it and every hit (a revalidation gets its 304).
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { NO_STORE } from '../httpCaching.js';
import type { ResponseCache } from './responseCache.js';

/** Longer tag headers than this are dropped by common CDNs; such an answer is not stored by one. */
export const MAX_TAG_HEADER_BYTES = 8000;

export function cacheHeadersPlugin(cache: ResponseCache): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          const outcome = cache.outcomeOf(contextValue);
          const cacheControl = response.http.headers.get('cache-control') ?? '';
          if (!outcome?.public || !outcome.etag || !cacheControl.startsWith('public')) return;
          const tags = outcome.tags.join(',');
          if (tags.length > MAX_TAG_HEADER_BYTES) {
            // A CDN that cannot be told which tags it holds could not be purged: it must not store.
            response.http.headers.set('cache-control', NO_STORE);
            return;
          }
          response.http.headers.set('cache-tag', tags);
          response.http.headers.set('surrogate-key', outcome.tags.join(' '));
          response.http.headers.set('etag', outcome.etag);
        },
      };
    },
  };
}
