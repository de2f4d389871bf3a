/**
 * The operation meter on a small schema, executed by graphql-js: it counts exactly the entries
 * the answer holds (every field, `__typename` and its aliases, every list element, fragments and
 * @skip/@include applied), and stops before the entries past a budget are built.
 */
import { buildSchema, execute, parse } from 'graphql';
import type { DocumentNode, GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { newRequestCost } from '../../src/db/capacity.js';
import { meterSchema, meterOf, runMetered } from '../../src/pipeline/execution/meter.js';
import type { OperationBudgets } from '../../src/pipeline/execution/meter.js';
import type { Execute } from '../../src/pipeline/execution/execution.js';

const schema = meterSchema(
  buildSchema(`
    interface Named { name: String! }
    type Shelf implements Named { name: String! books: [Book!]! sealed: String! }
    type Book implements Named { name: String! title: String! shelf: Shelf! }
    type Query { shelves: [Shelf!]! named: [Named!]! }
  `),
);
(schema.getType('Named') as unknown as { resolveType: (value: { title?: string }) => string }).resolveType = (value) =>
  value.title === undefined ? 'Shelf' : 'Book';

/** How many titles the executor completed (a resolver of their own: the meter never calls it). */
let leafReads = 0;
(schema.getType('Book') as GraphQLObjectType).getFields().title!.resolve = (value: { title: string }) => {
  leafReads += 1;
  return value.title;
};
// A non-null field that always fails: its shelf, and the list of shelves, become null.
(schema.getType('Shelf') as GraphQLObjectType).getFields().sealed!.resolve = () => {
  throw new Error('sealed');
};
const book = (i: number) => ({ name: `b${i}`, title: `Title ${i}`, shelf: () => shelf(0) });
const shelf = (i: number): { name: string; books: ReturnType<typeof book>[] } => ({
  name: `s${i}`,
  books: Array.from({ length: 10 }, (_, j) => book(j)),
});
const rootValue = { shelves: () => [shelf(1), shelf(2)], named: () => [shelf(3), book(4)] };

const BUDGETS: OperationBudgets = { requests: 10, readCapacityUnits: 10, entries: 1_000_000, bytes: 1_000_000 };

/**
 * Fields of every object plus elements of every list, the way the meter counts them: in the
 * answer as serialized (a key set to undefined is not serialized).
 */
function entriesOf(value: unknown): number {
  if (Array.isArray(value)) return value.length + value.reduce((sum: number, item) => sum + entriesOf(item), 0);
  if (value && typeof value === 'object')
    return Object.values(value)
      .filter((item) => item !== undefined)
      .reduce((sum: number, item) => sum + 1 + entriesOf(item), 0);
  return 0;
}

const EXECUTORS: [string, Execute][] = [['graphql-js', execute]];

describe.each(EXECUTORS)('the operation meter under %s', (_name, executor) => {
  async function run(query: string | DocumentNode, budgets = BUDGETS, variableValues: Record<string, unknown> = {}) {
    const contextValue = {};
    let meter: ReturnType<typeof meterOf>;
    const result = await runMetered(
      { schema, document: typeof query === 'string' ? parse(query) : query, rootValue, contextValue, variableValues },
      budgets,
      newRequestCost(),
      (args) => {
        meter = meterOf(contextValue);
        return executor(args);
      },
    );
    return { result, entries: meter?.entries ?? 0 };
  }

  it.each([
    ['fields and lists', '{ shelves { name books { title } } }'],
    ['__typename and its aliases', '{ shelves { __typename a: __typename b: __typename books { t: __typename } } }'],
    [
      'fragments, inline and spread',
      '{ shelves { ...S books { ... on Book { title name } } } } fragment S on Shelf { name n2: name }',
    ],
    ['@skip and @include', '{ shelves { name @skip(if: true) books @include(if: false) { title } __typename } }'],
    ['an interface list', '{ named { name ... on Book { title } ... on Shelf { books { name } } } }'],
    ['a nested object', '{ shelves { books { shelf { name } } } }'],
  ])('counts the entries of the answer exactly: %s', async (_, query) => {
    const { result, entries } = await run(query);
    expect(result.errors).toBeUndefined();
    // An interface counts the widest of its types, so only there it may count more.
    if (query.includes('named')) expect(entries).toBeGreaterThanOrEqual(entriesOf(result.data));
    else expect(entries).toBe(entriesOf(result.data));
  });

  it('applies @skip and @include given by variables', async () => {
    const query = 'query($s: Boolean!) { shelves { name @skip(if: $s) books @include(if: $s) { title } } }';
    const skipped = await run(query, BUDGETS, { s: true });
    expect(skipped.result.data).toEqual({ shelves: [{ books: expect.any(Array) }, { books: expect.any(Array) }] });
    expect(skipped.entries).toBe(entriesOf(skipped.result.data));
  });

  it('counts each execution of one document by its own conditions (shapes are kept per their values)', async () => {
    const document = parse(
      'query($s: Boolean!) { shelves { name @skip(if: $s) books @include(if: $s) { title } ...F } } ' +
        'fragment F on Shelf { n2: name @include(if: $s) }',
    );
    const counted: number[] = [];
    for (const s of [true, false, true, false]) {
      const { result, entries } = await run(document, BUDGETS, { s });
      expect(result.errors).toBeUndefined();
      expect(entries).toBe(entriesOf(result.data));
      counted.push(entries);
    }
    // The two answers differ in size: a shape kept for one value would miscount the other.
    expect(counted[0]).not.toBe(counted[1]);
  });

  it('stops before the entries past the budget are built, and answers with BUDGET_EXCEEDED alone', async () => {
    leafReads = 0;
    // Each shelf's page of books is 10 + 10 x 3 entries: the first page passes, the second does not.
    const { result } = await run('{ shelves { books { title a: __typename b: __typename } } }', {
      ...BUDGETS,
      entries: 50,
    });
    expect(result.data).toBeUndefined();
    expect(result.errors?.map((error) => error.extensions.code)).toEqual(['BUDGET_EXCEEDED']);
    expect(result.errors?.[0]?.extensions).toMatchObject({ budget: 'entries', limit: 50 });
    expect(leafReads).toBe(10);
  });

  it('stops once the cost record shows more DynamoDB requests than the budget', async () => {
    const cost = newRequestCost();
    cost.requests = 11;
    const result = await runMetered(
      { schema, document: parse('{ shelves { name } }'), rootValue, contextValue: {} },
      BUDGETS,
      cost,
      executor,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BUDGET_EXCEEDED', budget: 'requests' });
  });

  it('counts an answer in which a non-null field nulled its parent once', async () => {
    const query = '{ shelves { books { title } sealed } }';
    // The budget is exactly what graphql-js counts: a run that completed the parent's other
    // fields before the failure nulled it must not count more.
    const contextValue = {};
    await runMetered({ schema, document: parse(query), rootValue, contextValue }, BUDGETS, newRequestCost(), execute);
    const entries = meterOf(contextValue)?.entries ?? 0;
    const { result } = await run(query, { ...BUDGETS, entries });
    expect(result.errors?.map((error) => error.message)).toEqual(['sealed']);
    expect(result.data).toBeNull();
  });
});
