/**
 * ETags for the answers the pipeline marked `Cache-Control: public` (src/pipeline/httpCaching.ts),
 * so a browser or CDN revalidates with If-None-Match and gets a bodiless 304 while the data is
 * unchanged. Private answers get none: nothing may store them, so nothing revalidates them.
 */
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';

/** Weak: the same JSON may be sent gzip- or br-encoded, which a strong ETag would have to tell apart. */
export const etagOf = (body: string | Buffer): string =>
  `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

export function etagForPublicAnswers(): RequestHandler {
  return (_req, res, next) => {
    const send = res.send.bind(res);
    res.send = (body?: unknown) => {
      const cacheControl = res.getHeader('cache-control');
      if (
        typeof cacheControl === 'string' &&
        cacheControl.startsWith('public') &&
        (typeof body === 'string' || Buffer.isBuffer(body))
      ) {
        // Express answers 304 itself when the request's If-None-Match names this ETag (req.fresh).
        // The response cache's ETag (of the cached answer) stays: the same for its miss and hits.
        if (!res.getHeader('etag')) res.setHeader('etag', etagOf(body));
      }
      return send(body);
    };
    next();
  };
}
