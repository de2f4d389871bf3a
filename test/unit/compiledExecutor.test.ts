/**
 * The compiled executor on a small schema, against graphql-js: the same answers (errors with
 * their codes, paths and locations), each document compiled once in a cache bounded by documents
 * and bytes, and the classes graphql-jit answers differently left to graphql-js, counted.
 */
import { buildSchema, execute, GraphQLError, OperationTypeNode, parse } from 'graphql';
import type { GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createCompiledExecutor, staticFallbackOf } from '../../src/pipeline/execution/compiledExecutor.js';
import type { FallbackClass } from '../../src/pipeline/execution/compiledExecutor.js';
import { answerDifference } from '../support/differentialExecutor.js';

const schema = buildSchema(`
  type Item { id: ID! name: String! broken: String strict: String! }
  type Query { item(id: ID!): Item items(first: Int! = 2): [Item!]! plain: String }
  type Mutation { a: String! b: String! }
`);
const fields = (type: string) => (schema.getType(type) as GraphQLObjectType).getFields();
const item = (id: string) => ({ id, name: `n-${id}` });
fields('Query').item!.resolve = (_, { id }: { id: string }) => item(id);
fields('Query').items!.resolve = (_, { first }: { first: number }) =>
  Array.from({ length: first }, (_, i) => item(String(i)));
fields('Query').plain!.resolve = () => {
  throw new Error('a plain error, no extensions');
};
fields('Item').broken!.resolve = () => {
  throw new GraphQLError('refused', { extensions: { code: 'BAD_USER_INPUT', argumentName: 'id' } });
};
fields('Item').strict!.resolve = () => Promise.reject(new GraphQLError('gone', { extensions: { code: 'NOT_FOUND' } }));

function executors() {
  const fallbacks: FallbackClass[] = [];
  const compiled = createCompiledExecutor({
    schema,
    maxDocuments: 3,
    maxBytes: 1_000_000,
    onFallback: (fallback) => fallbacks.push(fallback),
  });
  return { compiled, fallbacks };
}

async function both(query: string, variableValues?: Record<string, unknown>) {
  const { compiled, fallbacks } = executors();
  const args = { schema, document: parse(query), variableValues, contextValue: {} };
  const expected = await execute(args);
  const actual = await compiled.execute(args);
  return { expected, actual, fallbacks };
}

describe('the compiled executor', () => {
  it.each([
    ['fields and aliases', '{ a: item(id: "1") { id name } b: item(id: "2") { name id } }'],
    ['a resolver error with a code', '{ item(id: "1") { id broken } }'],
    ['an error without extensions', '{ plain }'],
    ['a list argument default', '{ items { id } }'],
    ['fragments and @skip', '{ items(first: 3) { ...F name @skip(if: true) } } fragment F on Item { id }'],
  ])('answers as graphql-js does: %s', async (_, query) => {
    const { expected, actual, fallbacks } = await both(query);
    expect(answerDifference({ result: actual }, { result: expected })).toBeNull();
    expect(fallbacks).toEqual([]);
  });

  it('answers a query in which a non-null field nulled its parent with graphql-js, counted', async () => {
    const { expected, actual, fallbacks } = await both('{ item(id: "1") { id strict } }');
    expect(actual.data).toEqual({ item: null });
    expect(answerDifference({ result: actual }, { result: expected })).toBeNull();
    expect(fallbacks).toEqual(['null-bubbling']);
  });

  it('keeps the codes, paths and locations of resolver errors as graphql-js errors', async () => {
    const { actual } = await both('{ item(id: "1") { broken } plain }');
    const [refused, plain] = actual.errors ?? [];
    expect(refused).toBeInstanceOf(GraphQLError);
    expect(refused?.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'id' });
    expect(refused?.path).toEqual(['item', 'broken']);
    expect(refused?.locations).toEqual([{ line: 1, column: 19 }]);
    // Apollo formats an error only when it has `extensions`; the original error is what masking sees.
    expect(plain?.extensions).toEqual({});
    expect(plain?.originalError?.message).toBe('a plain error, no extensions');
  });

  it.each([
    ['a non-null variable with a default', 'query($id: ID! = "1") { item(id: $id) { id } }', {}, 'variable-default'],
    ['a mutation of two root fields', 'mutation { a b }', {}, 'serial-mutation'],
    ['a variable of the wrong type', 'query($id: ID!) { item(id: $id) { id } }', { id: { x: 1 } }, 'variables'],
    ['a missing variable', 'query($id: ID!) { item(id: $id) { id } }', {}, 'variables'],
  ])('leaves %s to graphql-js, counted', async (_, query, variables, expectedClass) => {
    const { expected, actual, fallbacks } = await both(query, variables);
    expect(answerDifference({ result: actual }, { result: expected })).toBeNull();
    expect(fallbacks).toEqual([expectedClass]);
  });

  it('compiles a document once, whether the request names its operation or not', async () => {
    const { compiled } = executors();
    compiled.precompile('query One { item(id: "1") { id } }');
    expect(compiled.size.documents).toBe(1);
    await compiled.execute({ schema, document: parse('query One { item(id: "1") { id } }'), contextValue: {} });
    await compiled.execute({
      schema,
      document: parse('query One { item(id: "1") { id } }'),
      operationName: 'One',
      contextValue: {},
    });
    expect(compiled.size.documents).toBe(1);
  });

  it('compiles at start-up only the operations it is asked for', () => {
    const { compiled } = executors();
    const source = 'query One { item(id: "1") { id } } mutation Both { a b }';
    compiled.precompile(source, (operation) => operation.operation === OperationTypeNode.QUERY);
    expect(compiled.size.documents).toBe(1);
    compiled.precompile(source);
    expect(compiled.size.documents).toBe(2);
    const unnamed = executors().compiled;
    unnamed.precompile('mutation { a }', (operation) => operation.operation === OperationTypeNode.QUERY);
    expect(unnamed.size.documents).toBe(0);
  });

  it('keeps at most its bound of documents, the least recently used going first', async () => {
    const { compiled } = executors();
    for (let i = 0; i < 5; i += 1) {
      await compiled.execute({ schema, document: parse(`{ item(id: "${i}") { id } }`), contextValue: {} });
    }
    expect(compiled.size.documents).toBe(3);
  });

  it('keeps at most its bound of bytes', async () => {
    const compiled = createCompiledExecutor({ schema, maxDocuments: 100, maxBytes: 20_000 });
    for (let i = 0; i < 10; i += 1) {
      await compiled.execute({ schema, document: parse(`{ item(id: "${i}") { id name } }`), contextValue: {} });
    }
    expect(compiled.size.bytes).toBeLessThanOrEqual(20_000);
    expect(compiled.size.documents).toBeLessThan(10);
  });

  it('names no class for a plain query', () => {
    const document = parse('query($id: ID!, $n: Int = 2) { item(id: $id) { id } }');
    expect(staticFallbackOf(document.definitions[0] as never)).toBeNull();
  });
});

describe('answerDifference', () => {
  const answer = (data: unknown, errors: GraphQLError[] = []) => ({
    result: { data: data as Record<string, unknown>, ...(errors.length ? { errors } : {}) },
  });

  it('tells answers apart by the order of their keys', () => {
    expect(answerDifference(answer({ a: 1, b: 2 }), answer({ b: 2, a: 1 }))).toBe('data');
  });

  it('tells errors apart by message, path and code, and how many of each, in any order', () => {
    const one = new GraphQLError('x', { path: ['a'], extensions: { code: 'A' } });
    const two = new GraphQLError('x', { path: ['b'], extensions: { code: 'A' } });
    const other = new GraphQLError('x', { path: ['a'], extensions: { code: 'B' } });
    const worded = new GraphQLError('y', { path: ['a'], extensions: { code: 'A' } });
    // Which of two branches' failures graphql-js reports first depends on which settles first.
    expect(answerDifference(answer({}, [one, two]), answer({}, [two, one]))).toBeNull();
    expect(answerDifference(answer({}, [one, one]), answer({}, [one]))).toBe('errors');
    expect(answerDifference(answer({}, [one]), answer({}, [other]))).toBe('errors');
    expect(answerDifference(answer({}, [one]), answer({}, [two]))).toBe('errors');
    expect(answerDifference(answer({}, [one]), answer({}, [worded]))).toBe('errors');
    expect(answerDifference(answer({}, [one]), answer({}, [one]))).toBeNull();
  });

  it("compares an answer whose data was nulled on its root fields' errors alone, in any order", () => {
    const root = new GraphQLError('x', { path: ['a'], extensions: { code: 'A' } });
    const settledFirst = new GraphQLError('y', { path: ['b', 'c'], extensions: { code: 'B' } });
    const otherRoot = new GraphQLError('z', { path: ['d'], extensions: { code: 'A' } });
    expect(answerDifference(answer(null, [settledFirst, root]), answer(null, [root]))).toBeNull();
    expect(answerDifference(answer(null, [root, otherRoot]), answer(null, [otherRoot, root]))).toBeNull();
    expect(answerDifference(answer(null, [root]), answer(null, [otherRoot]))).toBe('errors');
  });

  it('tells costs apart when both are given', () => {
    const cost = (requests: number) => ({ requests, readCapacityUnits: 1, writeCapacityUnits: 0, byOperation: {} });
    expect(answerDifference({ ...answer({}), cost: cost(1) }, { ...answer({}), cost: cost(2) })).toBe('cost');
    expect(answerDifference({ ...answer({}), cost: cost(1) }, answer({}))).toBeNull();
  });
});
