/**
 * Browsing the catalog like a shop, through the API on DynamoDB Local: the whole shop or one
 * category, by name or by price, up or down, within a price range, with the name prefix and
 * stock filters composed, `totalCount` from the category counters. Counts the DynamoDB
 * requests each page costs, walks every listing both ways with its cursors, and checks that
 * writes (a price change, an order taking the last unit) move products in the new indexes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRODUCT_SHARDS } from '../src/table/keys.js';
import type { ProductModel } from '../src/table/models.js';
import { aProduct, aUser, store } from './support/factories.js';
import { errorCodes, startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

const CATEGORIES = ['tents', 'stoves', 'lamps'];
// 27 products: names and prices in different orders, some prices shared, every fourth sold out.
const products: ProductModel[] = Array.from({ length: 27 }, (_, i) =>
  aProduct({
    category: CATEGORIES[i % 3]!,
    name: `${['Alpine', 'Basecamp', 'Cinder', 'Dune', 'Ember'][i % 5]} ${String(26 - i).padStart(2, '0')}`,
    priceCents: 1000 + ((i * 7) % 9) * 500,
    stock: i % 4 === 0 ? 0 : 10 + i,
  }),
);
const buyer = aUser();

const LIST = `query($category: String, $namePrefix: String, $inStock: Boolean, $minPrice: String, $maxPrice: String,
    $orderBy: ProductOrder, $first: Int, $after: String, $last: Int, $before: String) {
  products(category: $category, namePrefix: $namePrefix, inStock: $inStock, minPrice: $minPrice, maxPrice: $maxPrice,
      orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {
    nodes { productId name stock price { amount } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await store(server.dynamo.doc, server.tableName, { users: [buyer], products, categoryCounters: true });
});
afterAll(() => server.stop());

type Args = Record<string, unknown>;
/** The response, loosely typed: these tests read deep into it. */
const ask = (...args: Parameters<TestServer['gql']>): Promise<any> => server.gql(...args);
async function list(variables: Args) {
  const response = await server.gql(LIST, variables);
  expect(response.errors).toBeUndefined();
  return { page: response.data!.products, requests: response.extensions!.cost!.dynamodb.requests };
}

const nameKey = (p: ProductModel) => `${p.name.toLowerCase()}#${p.productId}`;
const priceKey = (p: ProductModel) => `${String(p.priceCents).padStart(12, '0')}#${p.productId}`;
function expected(args: Args, from: ProductModel[] = products): string[] {
  const order = (args.orderBy as { field: string; direction?: string } | undefined) ?? { field: 'NAME' };
  const key = order.field === 'PRICE' ? priceKey : nameKey;
  const min = args.minPrice === undefined ? -1 : Math.round(Number(args.minPrice) * 100);
  const max = args.maxPrice === undefined ? Infinity : Math.round(Number(args.maxPrice) * 100);
  const prefix = typeof args.namePrefix === 'string' ? args.namePrefix.toLowerCase() : '';
  const kept = from.filter(
    (p) =>
      (args.category === undefined || p.category === args.category) &&
      (args.inStock === undefined || p.stock > 0 === args.inStock) &&
      p.priceCents >= min &&
      p.priceCents <= max &&
      p.name.toLowerCase().startsWith(prefix),
  );
  const sorted = kept.sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))));
  return (order.direction === 'DESC' ? sorted.reverse() : sorted).map((p) => p.productId);
}

/** Walks a listing forward with `first`, then backward with `last`; returns both walks and the requests per page. */
async function walk(args: Args, size: number) {
  const forward: string[] = [];
  const requests: number[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 40; pages++) {
    const { page, requests: spent } = await list({ ...args, first: size, after });
    forward.push(...page.nodes.map((node: any) => node.productId));
    requests.push(spent);
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  const backward: string[] = [];
  let before: string | undefined;
  for (let pages = 0; pages < 40; pages++) {
    const { page } = await list({ ...args, last: size, before });
    backward.unshift(...page.nodes.map((node: any) => node.productId));
    if (!page.pageInfo.hasPreviousPage) break;
    before = page.pageInfo.startCursor;
  }
  return { forward, backward, requests };
}

const listings: [string, Args][] = [
  ['the whole shop by name', {}],
  ['the whole shop by name, down', { orderBy: { field: 'NAME', direction: 'DESC' } }],
  ['the whole shop by price', { orderBy: { field: 'PRICE' } }],
  ['the whole shop by price, down', { orderBy: { field: 'PRICE', direction: 'DESC' } }],
  ['the whole shop in a price range, by price', { orderBy: { field: 'PRICE' }, minPrice: '15', maxPrice: '30.00' }],
  ['the whole shop in a price range, by name', { minPrice: '15', maxPrice: '30' }],
  [
    'the whole shop by name prefix, in stock, by price',
    { namePrefix: 'b', inStock: true, orderBy: { field: 'PRICE' } },
  ],
  ['a category by name, down', { category: 'tents', orderBy: { field: 'NAME', direction: 'DESC' } }],
  ['a category by price', { category: 'stoves', orderBy: { field: 'PRICE' } }],
  [
    'a category by price, down, from a price',
    { category: 'lamps', orderBy: { field: 'PRICE', direction: 'DESC' }, minPrice: '20' },
  ],
  ['a category by name, in a price range, in stock', { category: 'tents', maxPrice: '25', inStock: true }],
];

describe('every listing', () => {
  it.each(listings)('walks %s forward and backward in its order', async (_name, args) => {
    const want = expected(args);
    expect(want.length).toBeGreaterThan(2);
    const { forward, backward, requests } = await walk(args, 4);
    expect(forward).toEqual(want);
    expect(backward).toEqual(want);
    // One Query a page in a category; one per shard, in parallel, for the whole shop.
    const filtered = args.inStock !== undefined || (args.minPrice !== undefined && args.orderBy === undefined);
    const perPage = args.category === undefined ? PRODUCT_SHARDS : 1;
    for (const spent of requests) {
      if (filtered) expect(spent).toBeLessThanOrEqual(perPage * 3);
      else expect(spent).toBe(perPage);
    }
  });
});

describe('cursors', () => {
  it('are bound to the order, the range and the filters as well as the category', async () => {
    const { page } = await list({ first: 2 });
    const cursor = page.pageInfo.endCursor;
    for (const other of [
      { orderBy: { field: 'PRICE' } },
      { orderBy: { field: 'NAME', direction: 'DESC' } },
      { minPrice: '1' },
      { inStock: true },
      { namePrefix: 'a' },
      { category: 'tents' },
    ]) {
      const response = await ask(LIST, { ...other, first: 2, after: cursor });
      expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    }
    const resumed = await list({ first: 2, after: cursor });
    expect(resumed.page.nodes).toHaveLength(2);
  });
});

describe('bad arguments', () => {
  it.each([
    [{ minPrice: 'ten' }, 'minPrice'],
    [{ maxPrice: '1.001' }, 'maxPrice'],
    [{ minPrice: '20', maxPrice: '10' }, 'maxPrice'],
  ])('refuses %j with BAD_USER_INPUT before any read', async (args, field) => {
    const response = await ask(LIST, args);
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors![0]!.message).toContain(field);
    expect(response.extensions!.cost!.dynamodb.requests).toBe(0);
  });
});

describe('totalCount', () => {
  const COUNTED = `query($category: String, $inStock: Boolean) {
    products(category: $category, inStock: $inStock, first: 2) { totalCount nodes { name } } }`;

  it('is the category counter for a whole category, read beside the page', async () => {
    const response = await ask(COUNTED, { category: 'stoves' });
    expect(response.data.products.totalCount).toBe(products.filter((p) => p.category === 'stoves').length);
    // The page's Query and the counter's GetItem.
    expect(response.extensions.cost.dynamodb.requests).toBe(2);
  });

  it('is null, and reads nothing, for a filtered listing or the whole shop', async () => {
    const UNCOUNTED = COUNTED.replace('totalCount ', '');
    for (const variables of [{ category: 'stoves', inStock: true }, {}]) {
      const response = await ask(COUNTED, variables);
      expect(response.data.products.totalCount).toBeNull();
      const without = await ask(UNCOUNTED, variables);
      expect(response.extensions.cost.dynamodb.requests).toBe(without.extensions.cost.dynamodb.requests);
    }
    const plain = await ask(UNCOUNTED, { category: 'stoves' });
    expect(plain.extensions.cost.dynamodb.requests).toBe(1);
  });

  it('costs nothing under categories, which read the counters already', async () => {
    const response = await ask(
      '{ categories { name productCount products(first: 1, orderBy: { field: PRICE }) { totalCount } } }',
    );
    for (const category of response.data.categories) expect(category.products.totalCount).toBe(category.productCount);
    // The counters' Query, then one Query per category.
    expect(response.extensions.cost.dynamodb.requests).toBe(1 + CATEGORIES.length);
  });
});

describe('writes keep the indexes', () => {
  it('moves a product in price order when its price changes', async () => {
    const target = products[5]!;
    const read = await ask(`{ product(productId: "${target.productId}") { version } }`);
    const update = await ask(
      `mutation($input: UpdateProductInput!) { updateProduct(input: $input) { userErrors { code } } }`,
      { input: { productId: target.productId, expectedVersion: read.data.product.version, price: '999.00' } },
    );
    expect(update.data.updateProduct.userErrors).toEqual([]);
    target.priceCents = 99900;
    for (const args of [
      { orderBy: { field: 'PRICE', direction: 'DESC' } },
      { category: target.category, orderBy: { field: 'PRICE', direction: 'DESC' } },
    ]) {
      const { page } = await list({ ...args, first: 1 });
      expect(page.nodes[0].productId).toBe(target.productId);
      expect(page.nodes[0].price.amount).toBe('999.00');
    }
    const { page } = await list({ orderBy: { field: 'PRICE' }, minPrice: '999', maxPrice: '999' });
    expect(page.nodes.map((node: any) => node.productId)).toEqual([target.productId]);
  });

  it('drops a product from the in-stock listings once an order takes its last unit', async () => {
    const target = products.find((p) => p.stock > 0)!;
    const placed = await ask(
      `mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { userErrors { code } } }`,
      {
        input: {
          userId: buyer.userId,
          items: [{ productId: target.productId, quantity: target.stock }],
          idempotencyKey: 'last-units',
        },
      },
      { authorization: `Bearer ${await tokenFor(buyer.userId)}` },
    );
    expect(placed.data.placeOrder.userErrors).toEqual([]);
    target.stock = 0;
    for (const args of [
      { inStock: true, orderBy: { field: 'PRICE' } },
      { inStock: true },
      { inStock: true, category: target.category, orderBy: { field: 'PRICE' } },
    ]) {
      const { forward } = await walk(args, 20);
      expect(forward).toEqual(expected(args));
      expect(forward).not.toContain(target.productId);
    }
  });
});
