/**
 * Documents admission refused, remembered by the sha256 of their text: a document that failed to
 * parse, to pass the selection pre-check or to validate fails the same way every time (the schema
 * and the rules are fixed for the process), so a copy sent again costs a hash and a look-up
 * instead of another parse and validation.
 *
 * Bounded in entries and in bytes. What is kept of a refusal is what a client is told (message,
 * locations, extensions), never the parsed document or its source text, so an entry's size does
 * not grow with the document's.
 */
import { GraphQLError } from 'graphql';
import type { SourceLocation } from 'graphql';
import { LRUCache } from 'lru-cache';

/** A refusal as admission answers it. */
export interface DocumentRefusal {
  ok: false;
  errors: GraphQLError[];
  status: number;
}

interface Remembered {
  status: number;
  errors: { message: string; locations: readonly SourceLocation[] | undefined; extensions: Record<string, unknown> }[];
  /** Refused by the selection pre-check, from which trusted documents are exempt. */
  bySelections: boolean;
  bytes: number;
}

export interface RefusedDocumentsOptions {
  maxEntries?: number;
  maxBytes?: number;
}

export function createRefusedDocuments({ maxEntries = 10_000, maxBytes = 2 ** 20 * 4 }: RefusedDocumentsOptions = {}) {
  const entries = new LRUCache<string, Remembered>({
    max: maxEntries,
    maxSize: maxBytes,
    sizeCalculation: (entry) => entry.bytes,
  });
  return {
    /**
     * The refusal remembered for `hash`, rebuilt as fresh errors; undefined when there is none, or
     * when it came from the selection pre-check and the document is `trusted` now.
     */
    get(hash: string, trusted: boolean): DocumentRefusal | undefined {
      const entry = entries.get(hash);
      if (!entry || (entry.bySelections && trusted)) return undefined;
      return {
        ok: false,
        status: entry.status,
        errors: entry.errors.map(({ message, locations, extensions }) => {
          const error = new GraphQLError(message, { extensions });
          // The locations are what a client reads; the source they were computed from is not kept.
          if (locations) (error as { locations: readonly SourceLocation[] }).locations = locations;
          return error;
        }),
      };
    },
    remember(hash: string, refusal: DocumentRefusal, bySelections = false): void {
      const errors = refusal.errors.map((error) => ({
        message: error.message,
        locations: error.locations,
        extensions: { ...error.extensions },
      }));
      // An estimate of what the entry holds: its JSON and the key.
      const bytes = JSON.stringify(errors).length + hash.length + 64;
      entries.set(hash, { status: refusal.status, errors, bySelections, bytes });
    },
    get size(): number {
      return entries.size;
    },
  };
}

export type RefusedDocuments = ReturnType<typeof createRefusedDocuments>;
