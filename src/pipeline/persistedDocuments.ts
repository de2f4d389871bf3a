/**
 * The persisted-documents manifest that codegen writes for the client operations
 * (client/generated/persisted-documents.json) preloaded into Apollo Server's automatic
 * persisted queries: a client may send `extensions.persistedQuery.sha256Hash` alone for any
 * of those documents, with no registration round trip first. Other documents still register
 * the APQ way (hash + query once, then hash alone), in an in-memory LRU cache.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import type { KeyValueCache, KeyValueCacheSetOptions } from '@apollo/utils.keyvaluecache';
import { projectRoot } from '../projectRoot.js';
import type { DocumentLookup } from './trustedDocuments.js';

export const manifestPath = (): string => path.join(projectRoot(), 'client', 'generated', 'persisted-documents.json');

/** sha256 hex -> document, from the manifest's `"sha256:<hex>": "<document>"` entries. */
export function loadPersistedDocuments(file = manifestPath()): Map<string, string> {
  if (!existsSync(file)) return new Map();
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return new Map(Object.entries(manifest).map(([key, document]) => [key.replace(/^sha256:/, ''), document]));
}

/** Apollo prefixes APQ keys with `apq:`; trusted documents answer first, registered ones after. */
export class PersistedDocumentsCache implements KeyValueCache<string> {
  private readonly registered = new InMemoryLRUCache<string>();

  constructor(private readonly documents: DocumentLookup) {}

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

/** The trusted documents alone, with registration switched off: for PERSISTED_ONLY mode. */
export class ManifestOnlyCache extends PersistedDocumentsCache {
  override async set(): Promise<void> {}
}
