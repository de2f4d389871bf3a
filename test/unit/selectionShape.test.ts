/**
 * The selection pre-check that runs before validation (src/pipeline/admission/selectionShape.ts): it walks
 * the selections as the executor merges them and stops at the first bound, so a document whose
 * validation would cost the square of its selections is refused after a walk of a few of them.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/index.js';
import { loadPersistedDocuments } from '../../src/pipeline/documents/persistedDocuments.js';
import { selectionExcess } from '../../src/pipeline/admission/selectionShape.js';
import type { SelectionBounds } from '../../src/pipeline/admission/selectionShape.js';

const LOOSE: SelectionBounds = { maxFieldsPerSet: 1e6, maxRepeatedPairs: 1e6, maxSelections: 1e6 };
const excess = (text: string, bounds: Partial<SelectionBounds>) =>
  selectionExcess(parse(text, { maxTokens: 1e6 }), { ...LOOSE, ...bounds });

/** The least value of `bound` that `text` keeps. */
function measured(text: string, bound: keyof SelectionBounds): number {
  let value = 0;
  while (excess(text, { [bound]: value })) value += 1;
  return value;
}

const DEFAULTS: SelectionBounds = {
  maxFieldsPerSet: DEFAULT_LIMITS.maxSelectionSetFields,
  maxRepeatedPairs: DEFAULT_LIMITS.maxRepeatedFieldPairs,
  maxSelections: DEFAULT_LIMITS.maxSelections,
};

describe('the selection pre-check', () => {
  it('refuses the validation bomb (viewer { userId } 490 times) for its repeated response key', () => {
    const bomb = `{ ${'viewer { userId } '.repeat(490)}}`;
    expect(selectionExcess(parse(bomb), DEFAULTS)).toEqual({
      bound: 'maxRepeatedPairs',
      limit: DEFAULTS.maxRepeatedPairs,
      responseKey: 'viewer',
    });
  });

  it('counts n copies of a response key as n(n-1)/2 pairs, and the copies below them in the set they merge into', () => {
    expect(measured('{ viewer { userId } viewer { userId } viewer { userId } }', 'maxRepeatedPairs')).toBe(3);
    // Four viewers (6 pairs), whose merged selection holds four `orders` (6 more).
    const nested = `{ ${'viewer { orders(first: 1) { totalCount } } '.repeat(4)}}`;
    expect(measured(nested, 'maxRepeatedPairs')).toBe(12);
  });

  it('does not count pairs of leaves without arguments, which validation compares in constant time', () => {
    const typenames = `{ ${'__typename '.repeat(64)}}`;
    expect(measured(typenames, 'maxRepeatedPairs')).toBe(0);
    expect(measured(typenames, 'maxFieldsPerSet')).toBe(64);
  });

  it('merges inline fragments and spread fragments into the selection set they are in', () => {
    const text = '{ viewer { userId ... on User { email } ...F } } fragment F on User { name userId }';
    expect(measured(text, 'maxFieldsPerSet')).toBe(4);
  });

  it('counts a fragment wherever it is spread, and once per selection set', () => {
    const text = `{ a: viewer { ...F ...F } b: viewer { ...F } } fragment F on User { userId email name }`;
    // Two viewers, three spreads, and F's three fields under each viewer (not twice under a).
    expect(measured(text, 'maxSelections')).toBe(2 + 3 + 3 + 3);
  });

  it('walks fragments that no operation spreads, as validation does', () => {
    const text = `{ __typename } fragment F on Query { ${'viewer { userId } '.repeat(20)}}`;
    expect(excess(text, { maxRepeatedPairs: 100 })).toMatchObject({ bound: 'maxRepeatedPairs' });
  });

  it('leaves a fragment cycle to validation, even through nested fields', () => {
    const cycles = [
      '{ viewer { ...A } } fragment A on User { userId ...A }',
      '{ viewer { ...A } } fragment A on User { orders(first: 1) { nodes { user { ...B } } } } fragment B on User { ...A }',
    ];
    for (const text of cycles) expect(selectionExcess(parse(text), DEFAULTS)).toBeNull();
  });

  it('stops walking at the first bound exceeded', () => {
    expect(excess(`{ ${'viewer { userId } '.repeat(10)}}`, { maxSelections: 5 })).toEqual({
      bound: 'maxSelections',
      limit: 5,
    });
  });

  it('lets every trusted document of the repository through at the defaults', () => {
    const relay = Object.values(
      JSON.parse(readFileSync('examples/relay/persisted_queries.json', 'utf8')) as Record<string, string>,
    );
    for (const text of [...loadPersistedDocuments().values(), ...relay]) {
      expect(selectionExcess(parse(text), DEFAULTS)).toBeNull();
    }
  });
});
