/**
 * The persisted-documents manifest that codegen writes for the client operations
 * (client/generated/persisted-documents.json): the server's own trusted documents
 * (trustedDocuments.ts). A client may send `extensions.persistedQuery.sha256Hash` alone for any
 * of them, with no registration round trip first; other documents register the APQ way
 * (admission.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../projectRoot.js';

export const manifestPath = (): string => path.join(projectRoot(), 'client', 'generated', 'persisted-documents.json');

/** sha256 hex -> document, from the manifest's `"sha256:<hex>": "<document>"` entries. */
export function loadPersistedDocuments(file = manifestPath()): Map<string, string> {
  if (!existsSync(file)) return new Map();
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return new Map(Object.entries(manifest).map(([key, document]) => [key.replace(/^sha256:/, ''), document]));
}
