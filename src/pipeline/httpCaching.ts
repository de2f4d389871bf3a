/**
 * HTTP caching, decided by what the answer read: an anonymous GET (a query) that succeeded
 * without ever consulting the viewer (`access.readViewerData()`: no user or order data, not even
 * whether someone is signed in) may be cached by browsers and CDNs, whatever its document and
 * however its client hashed it. Every other response is `private, no-store`.
 * (The HTTP transport adds the ETag and answers If-None-Match.)
 */
import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLContext } from '../graphql/context.js';

export const NO_STORE = 'private, no-store';

export interface HttpCachingOptions {
  /** Seconds a public answer may be reused; 0 makes every answer `private, no-store`. */
  maxAgeSeconds: number;
}

export function httpCachingPlugin({ maxAgeSeconds }: HttpCachingOptions): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ request, response, errors, contextValue }) {
          // contextValue is incomplete when the context factory itself failed (a refused token).
          const access = (contextValue as Partial<GraphQLContext> | undefined)?.access;
          const isPublic =
            maxAgeSeconds > 0 &&
            request.http?.method === 'GET' &&
            // A signed-in answer stays private (RFC 9111's default for requests with credentials).
            !request.http.headers.get('authorization') &&
            access !== undefined &&
            !access.readViewerData() &&
            !errors?.length &&
            response.body.kind === 'single' &&
            !response.body.singleResult.errors &&
            (response.http.status ?? 200) === 200;
          response.http.headers.set('cache-control', isPublic ? `public, max-age=${maxAgeSeconds}` : NO_STORE);
        },
      };
    },
  };
}
