/**
 * The shape of a document's selections, measured before graphql-js validates it: a pre-check
 * that costs one walk over the selections, where validation can cost the square of them.
 *
 * graphql-js's OverlappingFieldsCanBeMerged compares every pair of fields that share a response
 * key in one selection set, and then the merged selections below each pair: 490 copies of
 * `viewer { userId }` (a 7.3 kB document, under the token limit) make about 120,000 comparisons and
 * hundreds of milliseconds of CPU before validation gives up. So the selections are walked the way
 * the executor collects them: a selection set merged with its inline fragments and the fragments
 * it spreads (each fragment once per set), and the sub-selections of one response key merged
 * across its fields. Three bounds hold on that walk:
 *
 * - `maxFieldsPerSet`: fields in one merged selection set, repeats included;
 * - `maxRepeatedPairs`: pairs of fields that share a response key in one merged selection set,
 *   summed over the document: the comparisons validation makes (n copies of a key are n(n-1)/2
 *   pairs, and the copies of a key below n repeated parents count in the set they merge into).
 *   Two leaves without arguments (`__typename` in every fragment) compare in constant time and do
 *   not count; `maxFieldsPerSet` bounds them;
 * - `maxSelections`: selections visited in all, fragments counted where they are spread. It also
 *   bounds the walk itself, which stops at the first bound exceeded.
 *
 * Fragments that no operation spreads are walked too (validation reads them as well). A fragment
 * spread within its own expansion, directly or below fields, is not followed: validation refuses
 * the cycle, in its own words.
 */
import { Kind } from 'graphql';
import type { DocumentNode, FragmentDefinitionNode, SelectionSetNode } from 'graphql';

export interface SelectionBounds {
  maxFieldsPerSet: number;
  maxRepeatedPairs: number;
  maxSelections: number;
}

/** The first bound a document exceeds, and by what. */
export interface SelectionExcess {
  bound: keyof SelectionBounds;
  limit: number;
  /** The response key whose repeats went over (`maxRepeatedPairs` only). */
  responseKey?: string;
}

/** Thrown inside the walk to stop it at the first excess; never leaves selectionExcess. */
class Exceeded extends Error {
  constructor(readonly excess: SelectionExcess) {
    super(`selection bound ${excess.bound} exceeded`);
  }
}

/** The first bound `document` exceeds, or null when it keeps them all. */
export function selectionExcess(document: DocumentNode, bounds: SelectionBounds): SelectionExcess | null {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const reached = new Set<string>();
  let visited = 0;
  let pairs = 0;
  const visit = () => {
    visited += 1;
    if (visited > bounds.maxSelections) throw new Exceeded({ bound: 'maxSelections', limit: bounds.maxSelections });
  };

  /** A selection set to merge, and the fragments whose expansion it lies in. */
  interface Pending {
    set: SelectionSetNode;
    inside: ReadonlySet<string>;
  }
  /** Collects one merged selection set (several, for the fields of one response key); what is below waits in `queue`. */
  const queue: Pending[][] = [];
  const walk = (sets: readonly Pending[]): void => {
    const byKey = new Map<string, { count: number; deep: number; below: Pending[] }>();
    let fields = 0;
    // Each fragment once per merged set, as the executor and validation take it.
    const spread = new Set<string>();
    const collect = ({ set, inside }: Pending): void => {
      for (const selection of set.selections) {
        visit();
        if (selection.kind === Kind.FIELD) {
          fields += 1;
          if (fields > bounds.maxFieldsPerSet) {
            throw new Exceeded({ bound: 'maxFieldsPerSet', limit: bounds.maxFieldsPerSet });
          }
          const key = selection.alias?.value ?? selection.name.value;
          let entry = byKey.get(key);
          if (!entry) byKey.set(key, (entry = { count: 0, deep: 0, below: [] }));
          // A field pairs with each earlier field of its key; two leaves without arguments compare
          // in constant time, so only a pair with a field that has arguments or a selection counts.
          const deep = selection.selectionSet !== undefined || (selection.arguments?.length ?? 0) > 0;
          pairs += deep ? entry.count : entry.deep;
          entry.count += 1;
          if (deep) entry.deep += 1;
          if (pairs > bounds.maxRepeatedPairs) {
            throw new Exceeded({ bound: 'maxRepeatedPairs', limit: bounds.maxRepeatedPairs, responseKey: key });
          }
          if (selection.selectionSet) entry.below.push({ set: selection.selectionSet, inside });
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          collect({ set: selection.selectionSet, inside });
        } else {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          // A fragment spread within its own expansion is a cycle: validation refuses it in its
          // own words, so the walk does not follow it.
          if (!fragment || spread.has(name) || inside.has(name)) continue;
          spread.add(name);
          reached.add(name);
          collect({ set: fragment.selectionSet, inside: new Set([...inside, name]) });
        }
      }
    };
    for (const pending of sets) collect(pending);
    for (const { below } of byKey.values()) if (below.length > 0) queue.push(below);
  };
  // Level by level, with a queue rather than recursion.
  const walkFrom = (root: SelectionSetNode, inside: ReadonlySet<string>): void => {
    queue.length = 0;
    queue.push([{ set: root, inside }]);
    for (let next = 0; next < queue.length; next += 1) walk(queue[next] as Pending[]);
  };

  try {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION) walkFrom(definition.selectionSet, new Set());
    }
    for (const [name, fragment] of fragments) {
      if (!reached.has(name)) walkFrom(fragment.selectionSet, new Set([name]));
    }
  } catch (error) {
    if (error instanceof Exceeded) return error.excess;
    throw error;
  }
  return null;
}
