/**
 * EXECUTOR=auto: which operations run compiled. Queries whose estimated cost reaches the
 * threshold do; small queries, mutations, subscriptions and variables that do not coerce stay
 * on graphql-js (the differential suite proves both executors answer alike).
 */
import { parse } from 'graphql';
import type { ExecutionArgs } from 'graphql';
import { describe, expect, it } from 'vitest';
import { prefersCompiled } from '../../src/pipeline/execution.js';
import { buildSchema } from '../../src/pipeline/schema.js';

const schema = buildSchema();
const args = (query: string, variableValues: Record<string, unknown> = {}): ExecutionArgs => ({
  schema,
  document: parse(query),
  variableValues,
});

const PAGE = `query Page($category: String!, $first: Int) {
  products(category: $category, first: $first) { edges { cursor node { id productId name description stock price { amount currencyCode } } } }
}`;
const ONE = `query One($productId: ID!) { product(productId: $productId) { id name } }`;

describe('EXECUTOR=auto', () => {
  it('compiles a page of many fields, not a small query', () => {
    expect(prefersCompiled(args(PAGE, { category: 'books', first: 20 }), 200)).toBe(true);
    expect(prefersCompiled(args(ONE, { productId: 'p-1' }), 200)).toBe(false);
  });

  it('follows the variables that size the page, and the threshold', () => {
    expect(prefersCompiled(args(PAGE, { category: 'books', first: 1 }), 200)).toBe(false);
    expect(prefersCompiled(args(PAGE, { category: 'books', first: 1 }), 1)).toBe(true);
  });

  it('leaves mutations, subscriptions and refused variables to graphql-js', () => {
    // Each would reach a threshold of 0 by its cost: only its kind keeps it on graphql-js.
    const query = `{ product(productId: "p-1") { id } }`;
    expect(prefersCompiled(args(query), 0)).toBe(true);
    const mutation = `mutation { updateProduct(input: { productId: "p-1", expectedVersion: 1, name: "n" }) { product { id } } }`;
    expect(prefersCompiled(args(mutation), 0)).toBe(false);
    const subscription = `subscription { orderUpdated(orderId: "o-1") { type order { id } } }`;
    expect(prefersCompiled(args(subscription), 0)).toBe(false);
    expect(prefersCompiled(args(PAGE, { category: 7, first: 20 }), 0)).toBe(false);
  });
});
