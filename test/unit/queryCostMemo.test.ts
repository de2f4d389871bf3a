import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { queryCost } from '../../src/pipeline/queryCost.js';
import { buildSchema } from '../../src/pipeline/schema.js';

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
