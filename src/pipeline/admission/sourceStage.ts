/**
 * Admission's first stage (admission.ts), `source`: the document's text and its sha256, from the
 * request or the trusted documents (the server's manifest and the registry's, trustedDocuments.ts)
 * or a document registered the automatic-persisted-queries way. PERSISTED_ONLY refuses anything
 * but a trusted document here, before parsing.
 */
import { GraphQLError } from 'graphql';
import { LRUCache } from 'lru-cache';
import { ErrorCode } from '../../errors.js';
import type { DocumentLookup } from '../documents/trustedDocuments.js';
import type { OperationRequest } from './admission.js';
import { sha256 } from './documentStage.js';
import { refusal, refuse } from './refusal.js';
import type { Refusal } from './refusal.js';

/** The trusted documents (the server's manifest and the registry's), by id. */
export type AdmissionDocuments = DocumentLookup & { ensure?(id: string): Promise<void> };

/**
 * Documents registered the automatic-persisted-queries way (hash and text once, then the hash
 * alone), at most this many bytes of text: a client that registers more only sends its texts again.
 */
const REGISTERED_MAX_BYTES = 8 * 2 ** 20;

/**
 * The sha256 of texts sent lately, by text, at most this many bytes of text: an app sends the same
 * few documents over and over, and looking a text up costs a fraction of hashing it again.
 */
const HASHED_MAX_BYTES = 4 * 2 ** 20;

/** Apollo Server's answer to an unknown hash: 200, so that the client sends the text next. */
const persistedQueryNotFound = (): Refusal =>
  refuse(
    200,
    new GraphQLError('PersistedQueryNotFound', {
      extensions: {
        code: 'PERSISTED_QUERY_NOT_FOUND',
        http: { status: 200, headers: new Map([['cache-control', 'private, no-cache, must-revalidate']]) },
      },
    }),
  );

export interface Source {
  ok: true;
  text: string;
  hash: string;
  /** Sent with its text and hash: registered once admitted (automatic persisted queries). */
  register: boolean;
}

/** The source stage: its caches of hashes and registered texts live as long as the admission. */
export function createSourceStage({
  persistedOnly,
  documents,
}: {
  persistedOnly: boolean;
  documents: AdmissionDocuments;
}) {
  const hashed = new LRUCache<string, string>({
    maxSize: HASHED_MAX_BYTES,
    sizeCalculation: (_hash, text) => text.length + 64,
  });
  /** The sha256 of a request's text, hashed once per text (a pure function of it). */
  const hashOf = (text: string): string => {
    let hash = hashed.get(text);
    if (hash === undefined) {
      hash = sha256(text);
      hashed.set(text, hash);
    }
    return hash;
  };
  const registered = new LRUCache<string, string>({
    maxSize: REGISTERED_MAX_BYTES,
    sizeCalculation: (text) => Math.max(1, text.length),
  });

  /**
   * PERSISTED_ONLY: only trusted documents, sent by id or in full. Null when the request may go
   * on.
   */
  function persistedOnlyCheck(request: OperationRequest): Refusal | null {
    if (!persistedOnly) return null;
    const { query, persistedHash } = request;
    const allowed =
      typeof query === 'string' && query !== ''
        ? documents.has(hashOf(query))
        : typeof persistedHash === 'string' && documents.has(persistedHash);
    return allowed ? null : persistedRequired();
  }

  /**
   * The document's text and its sha256: the request's text (hashed here, once), or the text of the
   * trusted or registered document its id names. A trusted document whose text is not at hand
   * (the Lambda reads the registry's index) is read first; 503 when the registry cannot be read.
   */
  async function source(request: OperationRequest): Promise<Source | Refusal> {
    const { query, persistedHash, persistedVersion } = request;
    if (persistedVersion !== undefined && persistedVersion !== 1) {
      return refuse(400, refusal('Unsupported persisted query version', 'BAD_REQUEST'));
    }
    if (typeof query === 'string' && query !== '') {
      const hash = hashOf(query);
      if (typeof persistedHash === 'string' && (documents.sha256Of?.(persistedHash) ?? persistedHash) !== hash) {
        return refuse(400, refusal('provided sha does not match query', 'BAD_REQUEST'));
      }
      return { ok: true, text: query, hash, register: typeof persistedHash === 'string' && !persistedOnly };
    }
    if (typeof persistedHash !== 'string') {
      return refuse(
        400,
        refusal('The request must contain a non-empty `query` or a `persistedQuery` extension', 'BAD_REQUEST'),
      );
    }
    if (documents.ensure) {
      try {
        await documents.ensure(persistedHash);
      } catch {
        return refuse(
          503,
          new GraphQLError('The trusted documents cannot be read right now; try again shortly', {
            extensions: { code: ErrorCode.SERVICE_UNAVAILABLE, http: { status: 503 } },
          }),
        );
      }
    }
    const trusted = documents.get(persistedHash);
    if (trusted !== undefined) {
      // A client's own id (Relay's md5) names the text; the admitted documents are kept by its sha256.
      return { ok: true, text: trusted, hash: documents.sha256Of?.(persistedHash) ?? persistedHash, register: false };
    }
    const known = persistedOnly ? undefined : registered.get(persistedHash);
    return known === undefined
      ? persistedQueryNotFound()
      : { ok: true, text: known, hash: persistedHash, register: false };
  }

  /** Keeps a text sent with its hash (automatic persisted queries) once its operation is admitted. */
  function register(text: Source): void {
    if (text.register && !documents.has(text.hash)) registered.set(text.hash, text.text);
  }

  return { persistedOnlyCheck, source, register };
}

/** PERSISTED_ONLY's refusal of anything but a trusted document. */
export function persistedRequired(): Refusal {
  return refuse(
    400,
    refusal(
      'This server only runs trusted documents: send the documentId (or extensions.persistedQuery.sha256Hash) of a published document',
      ErrorCode.PERSISTED_QUERY_REQUIRED,
    ),
  );
}
