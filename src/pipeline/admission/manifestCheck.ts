/**
 * Whether a manifest's documents would be admitted: each one parsed and validated by the
 * admission itself (token limit, graphql-js's rules, depth, aliases, directives), against this
 * server's schema. `npm run documents -- check` and `publish` run it before anything is written.
 */
import type { QueryLimits } from '../../config/index.js';
import type { TrustedDocument } from '../../db/documentRegistry.js';
import { createAdmission } from './admission.js';
import { buildSchema } from '../schema/schema.js';

/** One line per problem (`<id>: <message>`); empty when every document is valid. */
export async function checkManifest(documents: readonly TrustedDocument[], limits: QueryLimits): Promise<string[]> {
  const admission = createAdmission({
    schema: buildSchema(),
    limits,
    // Introspection may be off where the documents run: an app's documents must not rely on it.
    introspection: false,
    persistedOnly: false,
    documents: new Map(),
  });
  const problems: string[] = [];
  for (const { id, document } of documents) {
    const verdict = admission.document(document);
    if (!verdict.ok) problems.push(...verdict.errors.map((error) => `${id}: ${error.message}`));
  }
  return problems;
}
