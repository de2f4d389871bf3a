/**
 * HTTP caching, decided by what the answer read: an anonymous GET (a query) that succeeded, whose
 * reads (the dependency record's tags, or the cached entry's) are all public and which never
 * consulted the viewer (`access.readViewerData()`: not even whether someone is signed in), may be
 * cached by browsers and CDNs, whatever its document and however its client hashed it. Every
 * other response is `private, no-store`. (graphqlHttp.ts answers If-None-Match.)
 */
import { isPublicTag } from '../../table/dependencies.js';

export const NO_STORE = 'private, no-store';

/** Longer tag headers than this are dropped by common CDNs; such an answer is not stored by one. */
export const MAX_TAG_HEADER_BYTES = 8000;

/** What decides whether an answer over HTTP is public. */
export interface CachingFacts {
  /** Seconds a public answer may be reused (CACHE_MAX_AGE); 0 makes every answer `private, no-store`. */
  maxAgeSeconds: number;
  method: string | undefined;
  /** The request carried credentials (`Authorization`). */
  signedIn: boolean;
  /** The answer's status and whether it has errors. */
  ok: boolean;
  /**
   * What the answer read: its tags (a hit's, its entry's), whether a read was not named by a tag,
   * and whether it consulted the viewer at all (`access.readViewerData()`).
   */
  tags: readonly string[];
  unnamedRead: boolean;
  viewerRead: boolean;
  /** The ETag of the answer's data: the cache entry's, or made from the data's JSON when asked for. */
  etag: () => string;
}

/**
 * Whether the answer to a request may be public at all, known before it executes: an anonymous
 * GET while public answers are on. Only then does HTTP caching need what the answer read.
 */
export const mayBePublic = (facts: Pick<CachingFacts, 'maxAgeSeconds' | 'method' | 'signedIn'>): boolean =>
  facts.maxAgeSeconds > 0 &&
  facts.method === 'GET' &&
  // A signed-in answer stays private (RFC 9111's default for requests with credentials).
  !facts.signedIn;

/**
 * The caching headers of an answer over HTTP: `Cache-Control`, and for a public one its
 * dependency tags in `Cache-Tag` (comma separated: Cloudflare, Akamai) and `Surrogate-Key` (space
 * separated: Fastly), so the CDN can purge it by tag, and its ETag, made from its data alone (the
 * cost extension differs between a miss and a hit): a revalidation gets its 304 whether the
 * answer came from the cache or not. An answer whose tags would not fit a CDN's header is not
 * public: a CDN that cannot be told which tags it holds could not be purged.
 */
export function cachingHeaders(facts: CachingFacts): Map<string, string> {
  const isPublic =
    mayBePublic(facts) && facts.ok && !facts.viewerRead && !facts.unnamedRead && facts.tags.every(isPublicTag);
  const tagHeader = isPublic ? facts.tags.join(',') : '';
  if (!isPublic || tagHeader.length > MAX_TAG_HEADER_BYTES) return new Map([['cache-control', NO_STORE]]);
  const headers = new Map([
    ['cache-control', `public, max-age=${facts.maxAgeSeconds}`],
    ['etag', facts.etag()],
  ]);
  if (facts.tags.length > 0) {
    headers.set('cache-tag', tagHeader);
    headers.set('surrogate-key', facts.tags.join(' '));
  }
  return headers;
}
