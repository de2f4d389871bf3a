/**
 * Admission's document stage on the real schema: the selection pre-check refuses a validation
 * bomb before graphql-js validates it, a refused document is remembered by its hash (a copy sent
 * again is not parsed again), and the memory of refusals is bounded.
 */
import { GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/index.js';
import { createAdmission, sha256 } from '../../src/pipeline/admission/admission.js';
import { admittedBytes } from '../../src/pipeline/admission/documentStage.js';
import { createRefusedDocuments } from '../../src/pipeline/admission/refusedDocuments.js';
import { buildSchema } from '../../src/pipeline/schema/schema.js';
import { TrustedDocuments } from '../../src/pipeline/documents/trustedDocuments.js';

const schema = buildSchema();
const BOMB = `{ ${'viewer { userId } '.repeat(490)}}`;

function anAdmission(documents = new TrustedDocuments()) {
  return createAdmission({ schema, limits: DEFAULT_LIMITS, introspection: false, persistedOnly: false, documents });
}

describe("admission's document stage", () => {
  it('refuses the validation bomb in the pre-check, naming the setting', async () => {
    const verdict = anAdmission().document(BOMB);
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.status).toBe(400);
    expect(verdict.errors).toHaveLength(1);
    expect(verdict.errors[0]?.extensions).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      limit: 'MAX_REPEATED_FIELD_PAIRS',
      maximum: DEFAULT_LIMITS.maxRepeatedFieldPairs,
    });
    expect(verdict.errors[0]?.message).toMatch(/"viewer" too many times/);
  });

  it('answers a refused document sent again from memory, without parsing it again', async () => {
    const admission = anAdmission();
    const first = admission.document(BOMB);
    const parsed = admission.stats.parsed;
    const again = admission.document(BOMB);
    expect(admission.stats).toEqual({ parsed, remembered: 1 });
    expect(again).toEqual(first);
  });

  it('remembers a validation failure with its locations, and a parse failure', async () => {
    const admission = anAdmission();
    for (const text of ['{ product(productId: "x") { nope } }', '{ product(']) {
      const first = admission.document(text);
      const again = admission.document(text);
      expect(again.ok).toBe(false);
      if (first.ok || again.ok) return;
      expect(again.errors.map((error) => [error.message, error.locations, error.extensions.code])).toEqual(
        first.errors.map((error) => [error.message, error.locations, error.extensions.code]),
      );
    }
    expect(admission.stats).toEqual({ parsed: 2, remembered: 2 });
  });

  it('admits a document refused by the pre-check once it is trusted: published documents are exempt', async () => {
    const documents = new TrustedDocuments();
    const admission = anAdmission(documents);
    // Valid, but over the fields one selection set may hold.
    const wide = `{ ${'__typename '.repeat(DEFAULT_LIMITS.maxSelectionSetFields + 1)}}`;
    expect(admission.document(wide).ok).toBe(false);
    documents.replace([{ id: sha256(wide), sha256: sha256(wide), document: wide }], 1);
    expect(admission.document(wide).ok).toBe(true);
  });
});

describe('the memory of refused documents', () => {
  const refusal = (message: string) => ({ ok: false as const, status: 400, errors: [new GraphQLError(message)] });

  it('keeps at most its bound of entries, the least recently used going first', () => {
    const refused = createRefusedDocuments({ maxEntries: 2 });
    for (const hash of ['a', 'b', 'c']) refused.remember(hash, refusal(hash));
    expect(refused.size).toBe(2);
    expect(refused.get('a', false)).toBeUndefined();
    expect(refused.get('c', false)?.errors[0]?.message).toBe('c');
  });

  it('keeps at most its bound of bytes', () => {
    const refused = createRefusedDocuments({ maxBytes: 1000 });
    for (let i = 0; i < 50; i++) refused.remember(`hash-${i}`, refusal('x'.repeat(100)));
    expect(refused.size).toBeLessThan(10);
  });
});

describe('what an admitted document is counted for', () => {
  // Heap bytes per parsed document, measured over 4,000 documents of each shape held at once
  // (node --expose-gc, heap used after a full GC): the count must not be below them.
  const MEASURED: [string, string, number][] = [
    [
      'a page',
      'query Page1($category: String!, $first: Int) { products(category: $category, first: $first) { nodes { productId name price { amount } } } }',
      11_691,
    ],
    ['a ping', 'query Ping1 { __typename }', 2_325],
    ['a long comment', `# ${'x'.repeat(2000)} 1\nquery P1 { __typename }`, 4_458],
  ];

  it.each(MEASURED)('covers %s, and not ten times over', (_shape, text, measured) => {
    const counted = admittedBytes(text, parse(text));
    expect(counted).toBeGreaterThanOrEqual(measured);
    expect(counted).toBeLessThan(measured * 2);
  });
});
