/**
 * What the HTTP transports say of a public answer (one a CDN may store: `Cache-Control: public`,
 * httpCaching.ts), whatever its root field, whichever transport carried it (node:http or the
 * Lambda), with or without a response cache:
 * - its dependency tags in `Cache-Tag` (comma separated: Cloudflare, Akamai) and `Surrogate-Key`
 *   (space separated: Fastly), so the CDN can purge it by tag when the purge hook names one:
 *   a hit's from its entry, any other answer's from what its execution read;
 * - its ETag, made from its data alone (the cost extension differs between a miss and a hit):
 *   the cached entry's, which was made the same way, or the data's. A revalidation gets its 304
 *   whether the answer came from the cache or not.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLContext } from '../../graphql/context.js';
import { etagOf, NO_STORE } from '../httpCaching.js';
import type { ResponseCache } from './responseCache.js';

/** Longer tag headers than this are dropped by common CDNs; such an answer is not stored by one. */
export const MAX_TAG_HEADER_BYTES = 8000;

export function cacheHeadersPlugin(cache: ResponseCache | undefined): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          const cacheControl = response.http.headers.get('cache-control') ?? '';
          if (!cacheControl.startsWith('public') || response.body.kind !== 'single') return;
          const outcome = cache?.outcomeOf(contextValue);
          const tags = outcome?.status === 'hit' ? outcome.tags : [...(contextValue.reads?.tags ?? [])];
          const header = tags.join(',');
          if (header.length > MAX_TAG_HEADER_BYTES) {
            // A CDN that cannot be told which tags it holds could not be purged: it must not store.
            response.http.headers.set('cache-control', NO_STORE);
            return;
          }
          if (tags.length > 0) {
            response.http.headers.set('cache-tag', header);
            response.http.headers.set('surrogate-key', tags.join(' '));
          }
          const { data } = response.body.singleResult;
          response.http.headers.set('etag', outcome?.etag ?? etagOf(JSON.stringify(data ?? null)));
        },
      };
    },
  };
}
