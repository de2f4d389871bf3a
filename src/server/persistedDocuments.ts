/**
 * The persisted-documents manifest that codegen writes for the client operations
 * (client/generated/persisted-documents.json) preloaded into Apollo Server's automatic
 * persisted queries: a client may send `extensions.persistedQuery.sha256Hash` alone for any
 * of those documents, with no registration round trip first. Other documents still register
 * the APQ way (hash + query once, then hash alone), in an in-memory LRU cache.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import type { KeyValueCache, KeyValueCacheSetOptions } from '@apollo/utils.keyvaluecache';
import type { RequestHandler } from 'express';
import { ErrorCode } from '../errors.js';
import { projectRoot } from '../projectRoot.js';

export const manifestPath = (): string => path.join(projectRoot(), 'client', 'generated', 'persisted-documents.json');

/** sha256 hex -> document, from the manifest's `"sha256:<hex>": "<document>"` entries. */
export function loadPersistedDocuments(file = manifestPath()): Map<string, string> {
  if (!existsSync(file)) return new Map();
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return new Map(Object.entries(manifest).map(([key, document]) => [key.replace(/^sha256:/, ''), document]));
}

/** Apollo prefixes APQ keys with `apq:`; manifest documents answer first, registered ones after. */
export class PersistedDocumentsCache implements KeyValueCache<string> {
  private readonly registered = new InMemoryLRUCache<string>();

  constructor(private readonly documents: ReadonlyMap<string, string>) {}

  async get(key: string): Promise<string | undefined> {
    return this.documents.get(key.replace(/^apq:/, '')) ?? this.registered.get(key);
  }

  async set(key: string, value: string, options?: KeyValueCacheSetOptions): Promise<void> {
    await this.registered.set(key, value, options);
  }

  async delete(key: string): Promise<boolean | void> {
    return this.registered.delete(key);
  }
}

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

/** The manifest alone, with registration switched off: for PERSISTED_ONLY mode. */
export class ManifestOnlyCache extends PersistedDocumentsCache {
  override async set(): Promise<void> {}
}
