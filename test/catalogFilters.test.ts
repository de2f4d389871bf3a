/**
 * The catalog's new reads: a case-insensitive name prefix (a key condition), the in-stock
 * filter (a FilterExpression: pages still fill, within the read budget, with an honest
 * hasNextPage and a cursor that resumes where the reading stopped), and the categories with
 * their counters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_BUDGET } from '../src/db/pagination.js';
import type { ProductModel } from '../src/table/models.js';
import { aProduct, store } from './support/factories.js';
import { errorCodes, startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';

// "sparse": 60 products, every tenth in stock. "desert": one product in stock behind more
// sold-out ones than a page may read.
const sparse: ProductModel[] = Array.from({ length: 60 }, (_, i) =>
  aProduct({ category: 'sparse', name: `Item ${String(i).padStart(2, '0')}`, stock: i % 10 === 3 ? 5 : 0 }),
);
const desert: ProductModel[] = Array.from({ length: READ_BUDGET.items + 20 }, (_, i) =>
  aProduct({
    category: 'desert',
    name: `Dune ${String(i).padStart(3, '0')}`,
    stock: i === READ_BUDGET.items + 10 ? 1 : 0,
  }),
);
const named: ProductModel[] = ['Apple', 'apricot', 'APPLE pie', 'Banana', 'Avocado', 'apple'].map((name, i) =>
  aProduct({ category: 'fruit', name, stock: i % 2 }),
);

const PRODUCTS = `query($category: String!, $namePrefix: String, $inStock: Boolean, $first: Int, $after: String, $last: Int, $before: String) {
  products(category: $category, namePrefix: $namePrefix, inStock: $inStock, first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { name stock } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await store(server.dynamo.doc, server.tableName, {
    products: [...sparse, ...desert, ...named],
    categoryCounters: true,
  });
});
afterAll(() => server.stop());

async function page(variables: Record<string, unknown>) {
  const response = await server.gql(PRODUCTS, variables);
  expect(response.errors).toBeUndefined();
  return { page: response.data!.products, cost: response.extensions!.cost!.dynamodb };
}

const byGSI1 = (products: ProductModel[]) =>
  [...products].sort((a, b) =>
    `${a.name.toLowerCase()}#${a.productId}` < `${b.name.toLowerCase()}#${b.productId}` ? -1 : 1,
  );

describe('inStock', () => {
  it('fills every page of a walk over a mostly sold-out category, within the read budget', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; ; pages++) {
      const { page: current, cost } = await page({ category: 'sparse', inStock: true, first: 2, after });
      expect(cost.requests).toBeLessThanOrEqual(READ_BUDGET.requests);
      seen.push(...current.edges.map((edge: any) => edge.node.name));
      if (!current.pageInfo.hasNextPage) break;
      expect(current.edges).toHaveLength(2);
      after = current.pageInfo.endCursor;
      expect(pages).toBeLessThan(10);
    }
    expect(seen).toEqual(byGSI1(sparse.filter((p) => p.stock > 0)).map((p) => p.name));
  });

  it('walks backward over the same products', async () => {
    const seen: string[] = [];
    let before: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const { page: current } = await page({ category: 'sparse', inStock: true, last: 4, before });
      seen.unshift(...current.edges.map((edge: any) => edge.node.name));
      if (!current.pageInfo.hasPreviousPage) break;
      before = current.pageInfo.startCursor;
    }
    expect(seen).toEqual(byGSI1(sparse.filter((p) => p.stock > 0)).map((p) => p.name));
  });

  it('lists the sold-out products with inStock: false', async () => {
    const { page: current } = await page({ category: 'fruit', inStock: false, first: 10 });
    expect(current.edges.map((edge: any) => edge.node.stock)).toEqual([0, 0, 0]);
  });

  it('ends a page the budget cuts short with hasNextPage and a cursor that resumes where reading stopped', async () => {
    const first = await page({ category: 'desert', inStock: true, first: 5 });
    expect(first.page.edges).toEqual([]);
    expect(first.page.pageInfo.hasNextPage).toBe(true);
    expect(first.page.pageInfo.endCursor).toEqual(expect.any(String));
    // The budget held: far fewer read units than the whole category would cost.
    expect(first.cost.requests).toBeLessThanOrEqual(READ_BUDGET.requests);
    const next = await page({ category: 'desert', inStock: true, first: 5, after: first.page.pageInfo.endCursor });
    expect(next.page.edges.map((edge: any) => edge.node.name)).toEqual([`Dune ${READ_BUDGET.items + 10}`]);
    expect(next.page.pageInfo.hasNextPage).toBe(false);
    expect(next.page.pageInfo.hasPreviousPage).toBe(true);
  });
});

describe('namePrefix', () => {
  it.each([
    ['ap', ['APPLE pie', 'Apple', 'apple', 'apricot']],
    ['APPLE', ['APPLE pie', 'Apple', 'apple']],
    ['apple ', ['APPLE pie']],
    ['z', []],
  ])('%j matches names case-insensitively, in the category’s order', async (namePrefix, expected) => {
    const { page: current } = await page({ category: 'fruit', namePrefix, first: 10 });
    const names = current.edges.map((edge: any) => edge.node.name);
    expect([...names].sort()).toEqual([...expected].sort());
    expect(names).toEqual(byGSI1(named.filter((p) => expected.includes(p.name))).map((p) => p.name));
  });

  it('combines with inStock and pages within the prefix', async () => {
    const { page: first } = await page({ category: 'fruit', namePrefix: 'a', inStock: true, first: 1 });
    expect(first.edges).toHaveLength(1);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const { page: rest } = await page({
      category: 'fruit',
      namePrefix: 'a',
      inStock: true,
      first: 10,
      after: first.pageInfo.endCursor,
    });
    const all = [...first.edges, ...rest.edges].map((edge: any) => edge.node.name);
    expect(all).toEqual(
      byGSI1(named.filter((p) => p.stock > 0 && p.name.toLowerCase().startsWith('a'))).map((p) => p.name),
    );
  });

  it('refuses a cursor from the same category without the prefix', async () => {
    const { page: plain } = await page({ category: 'fruit', first: 1 });
    const response = await server.gql(PRODUCTS, {
      category: 'fruit',
      namePrefix: 'a',
      first: 1,
      after: plain.pageInfo.endCursor,
    });
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
  });

  it('refuses a prefix longer than 100 characters', async () => {
    const response = await server.gql(PRODUCTS, { category: 'fruit', namePrefix: 'a'.repeat(101) });
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors![0]!.message).toMatch(/at most 100/);
  });
});

describe('categories', () => {
  it('lists every category by name with its product count, in one request', async () => {
    const response = await server.gql('{ categories { name productCount } }');
    expect(response.data!.categories).toEqual([
      { name: 'desert', productCount: desert.length },
      { name: 'fruit', productCount: named.length },
      { name: 'sparse', productCount: sparse.length },
    ]);
    expect(response.extensions!.cost!.dynamodb.requests).toBe(1);
  });

  it('counts a selection under categories once per possible category in the cost limit', async () => {
    const response = await server.gql('{ categories { products(first: 100) { nodes { name description } } } }');
    expect(errorCodes(response)).toEqual(['QUERY_TOO_COMPLEX']);
  });

  it('pages a category’s products from Category.products with the same filters', async () => {
    const response = await server.gql(
      '{ categories { name products(namePrefix: "ap", inStock: true, first: 5) { nodes { name } } } }',
    );
    const fruit = response.data!.categories.find((c: any) => c.name === 'fruit');
    expect(fruit.products.nodes.map((n: any) => n.name)).toEqual(
      byGSI1(named.filter((p) => p.stock > 0 && p.name.toLowerCase().startsWith('ap'))).map((p) => p.name),
    );
  });
});
