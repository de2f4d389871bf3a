import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  queryCost,
  REMEMBERED_COSTS,
  REMEMBERED_COSTS_BYTES,
  REMEMBERED_KEY_MAX_CHARS,
  rememberedCosts,
} from '../../src/pipeline/admission/queryCost.js';
import { buildSchema } from '../../src/pipeline/schema/schema.js';

const schema = buildSchema();
const document = parse(`query Page($category: String!, $first: Int) {
  products(category: $category, first: $first) { nodes { productId name } }
}`);

describe('queryCost of a repeated request', () => {
  it('is the same as the first time, and still depends on the variables', () => {
    const small = queryCost(schema, document, { category: 'c', first: 2 }, 'Page');
    const large = queryCost(schema, document, { category: 'c', first: 100 }, 'Page');
    expect(large).toBeGreaterThan(small);
    expect(queryCost(schema, document, { category: 'c', first: 2 }, 'Page')).toBe(small);
    expect(queryCost(schema, document, { category: 'c', first: 100 }, 'Page')).toBe(large);
  });
});

describe('queryCost remembered across requests', () => {
  const page = parse(`query Orders($userId: ID!, $first: Int, $status: OrderStatus) {
    user(userId: $userId) { orders(first: $first, status: $status) { nodes { orderId } } }
  }`);

  it('is the same for every text a String or ID variable holds, and still follows the numbers', () => {
    const alice = queryCost(schema, page, { userId: 'alice', first: 5 }, 'Orders');
    expect(queryCost(schema, page, { userId: 'bob', first: 5 }, 'Orders')).toBe(alice);
    expect(queryCost(schema, page, { userId: 'bob', first: 50 }, 'Orders')).toBeGreaterThan(alice);
  });

  it('still refuses a value that does not coerce, after the same variable held a string', () => {
    queryCost(schema, document, { category: 'c', first: 2 }, 'Page');
    expect(() => queryCost(schema, document, { category: 7, first: 2 }, 'Page')).toThrow(/String/);
    // An enum is not text: a bad value is refused even after a good one was costed.
    queryCost(schema, page, { userId: 'alice', status: 'PLACED' }, 'Orders');
    expect(() => queryCost(schema, page, { userId: 'alice', status: 'NOT_A_STATUS' }, 'Orders')).toThrow(
      /NOT_A_STATUS/,
    );
  });
});

describe('queryCost of a list of ids', () => {
  const nodes = parse(`query Nodes($ids: [ID!]!) { nodes(ids: $ids) { id } }`);

  it('follows the length of the list, whatever ids it holds', () => {
    const two = queryCost(schema, nodes, { ids: ['a', 'b'] }, 'Nodes');
    expect(queryCost(schema, nodes, { ids: ['c', 'd'] }, 'Nodes')).toBe(two);
    expect(queryCost(schema, nodes, { ids: ['a', 'b', 'c', 'd', 'e'] }, 'Nodes')).toBeGreaterThan(two);
  });

  it('still refuses a list holding something else than ids', () => {
    queryCost(schema, nodes, { ids: ['a', 'b'] }, 'Nodes');
    expect(() => queryCost(schema, nodes, { ids: ['a', null] }, 'Nodes')).toThrow(/non-null|null/i);
  });
});

describe("queryCost of a mutation's input object", () => {
  const place = parse(`mutation Place($input: PlaceOrderInput!) {
    placeOrder(input: $input) { order { orderId items { productId } } userErrors { code } }
  }`);
  const input = (userId: string, idempotencyKey: string, lines: number) => ({
    userId,
    idempotencyKey,
    items: Array.from({ length: lines }, (_, i) => ({ productId: `p${i}`, quantity: 1 })),
  });

  it('is the same whatever texts its fields hold', () => {
    const first = queryCost(schema, place, { input: input('alice', 'key-1', 2) }, 'Place');
    expect(queryCost(schema, place, { input: input('bob', 'key-2', 2) }, 'Place')).toBe(first);
  });

  it('still refuses a field that does not coerce, after the same field held a string', () => {
    queryCost(schema, place, { input: input('alice', 'key-1', 2) }, 'Place');
    const bad = (idempotencyKey: unknown) => ({ input: { ...input('alice', 'key-1', 2), idempotencyKey } });
    expect(() => queryCost(schema, place, bad(7), 'Place')).toThrow(/String/);
    // Not even a value shaped like what a string is remembered as.
    expect(() => queryCost(schema, place, bad({ text: true }), 'Place')).toThrow(/String/);
    const badLine = { input: { ...input('alice', 'key-1', 1), items: [{ productId: ['p1'], quantity: 1 }] } };
    expect(() => queryCost(schema, place, badLine, 'Place')).toThrow(/ID/);
  });
});

describe('queryCost remembered, within its bounds whatever clients send', () => {
  const pageOf = (n: number) =>
    parse(`query Page${n}($category: String!, $first: Int) {
      products(category: $category, first: $first) { nodes { productId } }
    }`);

  it('keys only the variables the operation declares: an undeclared one is never part of the key', () => {
    const page = pageOf(0);
    const cost = queryCost(schema, page, { category: 'c', first: 3 }, 'Page0');
    const before = rememberedCosts(schema).entries;
    for (let i = 0; i < 100; i++) {
      const variables = { category: 'c', first: 3, note: `${i} `.repeat(1000) };
      expect(queryCost(schema, page, variables, 'Page0')).toBe(cost);
    }
    expect(rememberedCosts(schema).entries).toBe(before);
  });

  it('holds at most REMEMBERED_COSTS entries over every document, and no key past REMEMBERED_KEY_MAX_CHARS', () => {
    // More distinct documents and page sizes than it may hold: each stays remembered until it is the least recently used.
    const documents = Array.from({ length: 120 }, (_, n) => pageOf(n + 1));
    for (const [n, page] of documents.entries()) {
      for (let first = 1; first <= 100; first++) queryCost(schema, page, { category: 'c', first }, `Page${n + 1}`);
    }
    const { entries, bytes } = rememberedCosts(schema);
    expect(120 * 100).toBeGreaterThan(REMEMBERED_COSTS);
    expect(entries).toBe(REMEMBERED_COSTS);
    expect(bytes).toBeLessThanOrEqual(REMEMBERED_COSTS_BYTES);
    // The latest is remembered: the same again is a look-up that answers the same cost.
    const last = documents.at(-1) as (typeof documents)[number];
    expect(queryCost(schema, last, { category: 'c', first: 100 }, 'Page120')).toBe(
      queryCost(schema, pageOf(120), { category: 'c', first: 100 }, 'Page120'),
    );

    const nodes = parse(`query Nodes($ids: [ID!]!) { nodes(ids: $ids) { id } }`);
    const longKey = { ids: Array.from({ length: REMEMBERED_KEY_MAX_CHARS }, (_, i) => `id${i}`) };
    const held = rememberedCosts(schema);
    queryCost(schema, nodes, longKey, 'Nodes');
    expect(rememberedCosts(schema)).toEqual(held);
  });
});
