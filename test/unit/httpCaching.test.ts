/** Which documents may be cached publicly: decided from the document alone, private by default. */
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/pipeline/schema/schema.js';
import { readsOnlyPublicData } from '../../src/pipeline/schema/schemaPolicy.js';

const schema = buildSchema();

describe('readsOnlyPublicData', () => {
  it.each([
    ['{ product(productId: "p1") { name price { amount } } }'],
    ['{ products(category: "outdoor", first: 5) { edges { cursor node { name } } pageInfo { hasNextPage } } }'],
    ['{ categories { name productCount products(first: 2) { nodes { name } } } }'],
    ['query A { product(productId: "p1") { ...P } } fragment P on Product { __typename name }'],
  ])('public: %s', (document) => {
    expect(readsOnlyPublicData(schema, document)).toBe(true);
  });

  it.each([
    ['{ viewer { name } }', 'a user'],
    ['{ node(id: "UHJvZHVjdDpwMQ") { id } }', 'node can be anything'],
    ['{ product(productId: "p1") { name } user(userId: "alice") { name } }', 'one private root field'],
    ['{ __schema { types { name } } }', 'introspection'],
    [
      'mutation { createProduct(input: { name: "x", description: "d", category: "c", price: "1.00", stock: 1 }) { product { name } } }',
      'a mutation',
    ],
    ['{ product(productId: "p1") { nope } }', 'an unknown field'],
    ['{ product(', 'a syntax error'],
  ])('private: %s (%s)', (document) => {
    expect(readsOnlyPublicData(schema, document)).toBe(false);
  });
});
