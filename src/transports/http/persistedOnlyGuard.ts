/** The PERSISTED_ONLY gate for HTTP requests, before Apollo parses anything. */
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ErrorCode } from '../../errors.js';

/**
 * PERSISTED_ONLY mode: only documents of the manifest run, sent by hash (or in full, when the
 * full text hashes to a manifest entry). Anything else is refused before Apollo parses it,
 * with PERSISTED_QUERY_REQUIRED and HTTP 400.
 */
export function persistedOnlyGuard(documents: ReadonlyMap<string, string>): RequestHandler {
  const known = new Set(documents.keys());
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'POST') return next();
    const source = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown> | undefined;
    let extensions = source?.extensions;
    if (typeof extensions === 'string') {
      try {
        extensions = JSON.parse(extensions);
      } catch {
        extensions = undefined;
      }
    }
    const hash = (extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery?.sha256Hash;
    const query = source?.query;
    const allowed =
      typeof query === 'string'
        ? known.has(createHash('sha256').update(query).digest('hex'))
        : typeof hash === 'string' && known.has(hash);
    if (allowed) return next();
    res.status(400).json({
      errors: [
        {
          message:
            'This server only runs persisted documents: send extensions.persistedQuery.sha256Hash of a known document',
          extensions: { code: ErrorCode.PERSISTED_QUERY_REQUIRED },
        },
      ],
    });
  };
}
