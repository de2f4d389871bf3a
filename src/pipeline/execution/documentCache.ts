/**
 * The planned executor's cache of per-document work, bounded by entries and by estimated bytes
 * and keyed by the document's text, and the test for a value that may still be pending.
 */
import { print } from 'graphql';
import type { DocumentNode } from 'graphql';
import { LRUCache } from 'lru-cache';

export interface DocumentCacheOptions {
  /** Most documents kept. */
  maxDocuments: number;
  /** Most estimated bytes kept, over every entry's `bytes`. */
  maxBytes: number;
}

/** Entries per document text, and the text a document is keyed by. */
export function documentCache<Entry extends { bytes: number }>({ maxDocuments, maxBytes }: DocumentCacheOptions) {
  const entries = new LRUCache<string, Entry>({
    max: maxDocuments,
    maxSize: maxBytes,
    sizeCalculation: (entry) => Math.max(1, entry.bytes),
  });
  // Documents without a location (built in code, not parsed) are keyed by their printed text.
  const printed = new WeakMap<DocumentNode, string>();
  const sourceOf = (document: DocumentNode): string => {
    const body = document.loc?.source.body;
    if (body !== undefined) return body;
    let text = printed.get(document);
    if (text === undefined) printed.set(document, (text = print(document)));
    return text;
  };
  return { entries, sourceOf };
}

export const isPromiseLike = <T = unknown>(value: unknown): value is PromiseLike<T> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
