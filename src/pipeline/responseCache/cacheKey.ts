/**
 * The cache key of an answer: the document's hash, the operation name, the variables in
 * canonical form and the scope. Variables that differ only in the order of their keys give the
 * same key; anything else (a value, a type: `1` vs `"1"`, the viewer, the role) another one.
 * And the ETag of an answer's JSON, the same for an entry as for the answer it was stored from.
 */
import { createHash } from 'node:crypto';

/** JSON with every object's keys sorted, at any depth (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * Who may be served an answer: `public` (anyone; the document reads only the catalog) or one
 * viewer in one role. An anonymous caller of a private document is a scope of its own.
 */
export function scopeOf(isPublic: boolean, viewer: { userId: string; role: string } | null): string {
  if (isPublic) return 'public';
  return viewer ? `viewer:${viewer.role}:${viewer.userId}` : 'anonymous';
}

export function cacheKeyOf(
  documentHash: string,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  scope: string,
): string {
  return createHash('sha256')
    .update(documentHash)
    .update('\0')
    .update(operationName ?? '')
    .update('\0')
    .update(canonicalJson(variables ?? {}))
    .update('\0')
    .update(scope)
    .digest('base64url');
}

/**
 * The ETag of an answer's JSON, whoever computes it (the HTTP handler, the response cache for an
 * entry). Weak: the same JSON may be sent gzip- or br-encoded, which a strong ETag would have to
 * tell apart.
 */
export const etagOf = (json: string): string =>
  `W/"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
