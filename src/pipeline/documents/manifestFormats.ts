/**
 * The manifest files clients' tooling writes, read into one list of trusted documents:
 *
 * - graphql-codegen's client preset (`persisted-documents.json`): `{ "<hash>": "<document>" }`,
 *   the hash as `sha256:<hex>` or bare hex (sha256, or sha1 with `hashAlgorithm: sha1`);
 * - Relay's `persisted_queries.json`: the same shape, keyed by relay-compiler's id (md5 by
 *   default, sha1 or sha256 when configured);
 * - Apollo's persisted-query manifest (`@apollo/generate-persisted-query-manifest`):
 *   `{ "format": "apollo-persisted-query-manifest", "version": 1, "operations": [{ "id", "body", ... }] }`.
 *
 * Every id must be the hash of its document under the algorithm its length names: a manifest
 * that pairs an id with another text is refused as a whole, so a client's id always runs the
 * text its build produced.
 */
import { createHash } from 'node:crypto';
import type { TrustedDocument } from '../../db/documentRegistry.js';

export type ManifestFormat = 'codegen' | 'relay' | 'apollo';

export class ManifestFormatError extends Error {
  override name = 'ManifestFormatError';
}

const ALGORITHM_BY_LENGTH: Record<number, string> = { 32: 'md5', 40: 'sha1', 64: 'sha256' };

const digest = (algorithm: string, text: string) => createHash(algorithm).update(text).digest('hex');

/** One entry, its id checked against its text. */
function entry(rawId: string, document: unknown): TrustedDocument {
  const id = rawId.replace(/^sha256:/, '').toLowerCase();
  if (typeof document !== 'string' || document.trim() === '') {
    throw new ManifestFormatError(`The document of ${JSON.stringify(rawId)} is not a non-empty string`);
  }
  const algorithm = /^[0-9a-f]+$/.test(id) ? ALGORITHM_BY_LENGTH[id.length] : undefined;
  if (!algorithm || (rawId.startsWith('sha256:') && algorithm !== 'sha256')) {
    throw new ManifestFormatError(
      `${JSON.stringify(rawId.slice(0, 80))} is not a document id: expected sha256:<hex>, or the hex of an md5, sha1 or sha256 digest`,
    );
  }
  if (digest(algorithm, document) !== id) {
    throw new ManifestFormatError(`${JSON.stringify(rawId)} is not the ${algorithm} of its document`);
  }
  return { id, sha256: digest('sha256', document), document };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The documents of a manifest file's parsed JSON, and which format it was. Throws ManifestFormatError. */
export function readManifest(json: unknown): { format: ManifestFormat; documents: TrustedDocument[] } {
  if (!isRecord(json)) throw new ManifestFormatError('A manifest is a JSON object');
  if (json.format === 'apollo-persisted-query-manifest') {
    if (json.version !== 1 || !Array.isArray(json.operations)) {
      throw new ManifestFormatError('An Apollo persisted-query manifest needs "version": 1 and an "operations" array');
    }
    const documents = json.operations.map((operation: unknown, index) => {
      if (!isRecord(operation) || typeof operation.id !== 'string') {
        throw new ManifestFormatError(`operations[${index}] needs an "id" and a "body"`);
      }
      return entry(operation.id, operation.body);
    });
    return { format: 'apollo', documents: unique(documents) };
  }
  const documents = Object.entries(json).map(([id, document]) => entry(id, document));
  const relay = documents.some(({ id }) => id.length === 32);
  return { format: relay ? 'relay' : 'codegen', documents: unique(documents) };
}

/** One entry per id (a manifest may list an operation twice). */
const unique = (documents: TrustedDocument[]): TrustedDocument[] => [
  ...new Map(documents.map((document) => [document.id, document])).values(),
];
