/**
 * Query limits and input hardening under attack, over HTTP: deep, costly, aliased, directive-
 * laden, token-heavy and cyclic documents, oversized and batched bodies, and key-injection
 * values on every argument that becomes part of a DynamoDB key. Each is refused before any
 * DynamoDB request with the code that names the refusal, the server keeps answering, and the
 * table is unchanged afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { toGlobalId } from '../src/graphql/globalId.js';
import { demoItems } from '../src/seed/seed.js';
import type { Item } from '../src/table/codecs.js';
import { errorCodes, startTestServer } from './support/harness.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';
import { scanTable } from './support/writes.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await putItems(server.dynamo.doc, server.tableName, demoItems());
});
afterAll(() => server.stop());

const snapshot = () => scanTable(server.dynamo.doc, server.tableName);

/** POSTs a raw body (a string is sent as is). */
async function post(body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

/**
 * A selection exactly `depth` fields deep under `user(userId: "alice")`, cycling through
 * orders -> nodes -> user, ending on a scalar of the last type.
 */
function deepQuery(depth: number): string {
  const cycle = ['orders(first: 1)', 'nodes', 'user'];
  const leafAfter: Record<string, string> = { user: 'userId', 'orders(first: 1)': 'totalCount', nodes: 'orderId' };
  const fields = ['user'];
  while (fields.length < depth - 1) fields.push(cycle[(fields.length - 1) % cycle.length] as string);
  const leaf = leafAfter[fields.at(-1) as string] as string;
  const [root, ...rest] = fields;
  return `{ ${root}(userId: "alice") ${rest.map((field) => `{ ${field} `).join('')}{ ${leaf} }${' }'.repeat(rest.length)} }`;
}

/** A refusal at the validation stage: HTTP 400, no data, no DynamoDB request, the given code and message. */
function expectRefused(response: GraphQLResponse, code: string, message: RegExp): void {
  expect(response.status).toBe(400);
  expect(response).not.toHaveProperty('data');
  expect(errorCodes(response)).toContain(code);
  expect(response.errors?.map((error) => error.message).join('\n')).toMatch(message);
  expect(response.extensions?.cost?.dynamodb.requests ?? 0).toBe(0);
}

const aliases = (count: number) =>
  Array.from({ length: count }, (_, i) => `a${i}: product(productId: "tent-2p") { name }`).join(' ');

describe('documents over the query limits', () => {
  let before: Item[];
  beforeAll(async () => {
    before = await snapshot();
  });

  it('accepts a document at the depth limit', async () => {
    const response = await server.gql(deepQuery(DEFAULT_LIMITS.maxDepth));
    expect(response.errors).toBeUndefined();
    expect(response.data?.user).not.toBeNull();
  });

  it.each([DEFAULT_LIMITS.maxDepth + 1, 40, 200])('refuses a document %i fields deep', async (depth) => {
    expectRefused(await server.gql(deepQuery(depth)), 'GRAPHQL_VALIDATION_FAILED', /depth limit of 12 exceeded/);
  });

  it('refuses depth hidden in fragments and inline fragments', async () => {
    const response = await server.gql(`
      { user(userId: "alice") { ...A } }
      fragment A on User { orders(first: 1) { nodes { ... on Order { user { ...B } } } } }
      fragment B on User { orders(first: 1) { nodes { ... on Order { user { ...C } } } } }
      fragment C on User { orders(first: 1) { nodes { ... on Order { user { ...D } } } } }
      fragment D on User { orders(first: 1) { nodes { ... on Order { user { userId } } } } }
    `);
    expectRefused(response, 'GRAPHQL_VALIDATION_FAILED', /depth limit/);
  });

  it.each<[string, string, Record<string, unknown>]>([
    [
      'nested connections of 100',
      '{ user(userId: "alice") { orders(first: 100) { nodes { user { orders(first: 100) { nodes { orderId items { productId } } } } } } } }',
      {},
    ],
    [
      'nested connections sized by variables',
      'query($n: Int) { user(userId: "alice") { orders(first: $n) { nodes { user { orders(last: $n) { edges { node { orderId items { productId } } } } } } } } }',
      { n: 100 },
    ],
    [
      'a page of orders with every line and its product description',
      '{ user(userId: "alice") { orders(first: 100) { nodes { items { product { description } } } } } }',
      {},
    ],
    [
      'a connection under each of 100 nodes',
      'query($ids: [ID!]!) { nodes(ids: $ids) { ... on User { orders(first: 100) { nodes { orderId items { productId } } } } } }',
      { ids: Array.from({ length: 100 }, (_, i) => toGlobalId('User', `u${i}`)) },
    ],
  ])('refuses a costly document: %s', async (_, query, variables) => {
    const response = await server.gql(query, variables);
    expectRefused(response, 'QUERY_TOO_COMPLEX', new RegExp(`exceeds the limit of ${DEFAULT_LIMITS.maxCost}`));
    expect(response.errors?.[0]?.extensions?.cost).toBeGreaterThan(DEFAULT_LIMITS.maxCost);
  });

  it('accepts the same nested connections with small pages', async () => {
    const response = await server.gql(
      'query($n: Int) { user(userId: "alice") { orders(first: $n) { nodes { user { orders(last: $n) { edges { node { orderId } } } } } } } }',
      { n: 5 },
    );
    expect(response.errors).toBeUndefined();
    expect(response.data?.user.orders.nodes).toHaveLength(5);
  });

  it('refuses a fragment fan-out that would expand to millions of fields as too complex, not as a crash', async () => {
    const levels = 20;
    const fragments = Array.from(
      { length: levels },
      (_, i) => `fragment F${i} on Product { name ...F${i + 1} ...F${i + 1} }`,
    ).join('\n');
    const response = await server.gql(
      `{ product(productId: "tent-2p") { ...F0 } }\n${fragments}\nfragment F${levels} on Product { name }`,
    );
    expect(response.status).toBe(400);
    expect(errorCodes(response)).toEqual(['QUERY_TOO_COMPLEX']);
  });

  it('accepts as many aliases as the limit allows', async () => {
    const response = await server.gql(`{ ${aliases(DEFAULT_LIMITS.maxAliases)} }`);
    expect(response.errors).toBeUndefined();
    expect(Object.keys(response.data ?? {})).toHaveLength(DEFAULT_LIMITS.maxAliases);
  });

  it.each([
    ['50 aliases of product', `{ ${aliases(50)} }`],
    ['100 aliases of product', `{ ${aliases(100)} }`],
    ['50 aliases inside a fragment', `{ ...F } fragment F on Query { ${aliases(50)} }`],
  ])('refuses an alias bomb: %s', async (_, query) => {
    expectRefused(await server.gql(query), 'GRAPHQL_VALIDATION_FAILED', /Aliases limit of 15 exceeded/);
  });

  it('refuses too many directives', async () => {
    const fields = ['name', 'description', 'category', 'stock', 'version', 'productId'];
    const query = `{ product(productId: "tent-2p") { ${fields.map((field) => `${field} @include(if: true) @skip(if: false)`).join(' ')} } }`;
    expectRefused(await server.gql(query), 'GRAPHQL_VALIDATION_FAILED', /Directives limit of 10 exceeded/);
  });

  it('refuses a document of more tokens than the limit while parsing', async () => {
    const response = await server.gql(`{ ${'__typename '.repeat(DEFAULT_LIMITS.maxTokens + 500)} }`);
    expectRefused(response, 'GRAPHQL_PARSE_FAILED', /2000 tokens/);
  });

  it.each([
    ['two fragments spreading each other', 'fragment A on User { ...B } fragment B on User { ...A }'],
    ['a fragment spreading itself', 'fragment A on User { userId ...A } fragment B on User { ...A }'],
    [
      'a cycle through nested fields',
      'fragment A on User { orders(first: 1) { nodes { user { ...B } } } } fragment B on User { ...A }',
    ],
  ])('refuses a fragment cycle (%s) as a validation error, and keeps answering', async (_, fragments) => {
    const response = await server.gql(`{ user(userId: "alice") { ...A } } ${fragments}`);
    expectRefused(response, 'GRAPHQL_VALIDATION_FAILED', /Cannot spread fragment "A" within itself/);
    const next = await server.gql('{ product(productId: "tent-2p") { name } }');
    expect(next.data).toEqual({ product: { name: 'Two-Person Tent' } });
  });

  it('refuses variables of the wrong type as BAD_USER_INPUT, not as a server error', async () => {
    const response = await server.gql('query($n: Int) { user(userId: "alice") { orders(first: $n) { totalCount } } }', {
      n: 'a lot',
    });
    expect(response.status).toBe(400);
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
  });

  it('refuses a body over the size limit with 413, and keeps answering', async () => {
    const response = await post({ query: `{ __typename }${' '.repeat(DEFAULT_LIMITS.maxBodyBytes)}` });
    expect(response.status).toBe(413);
    const next = await server.gql('{ __typename }');
    expect(next.data).toEqual({ __typename: 'Query' });
  });

  it('refuses a large variable value over the size limit with 413', async () => {
    const response = await post({
      query: 'mutation($input: CreateUserInput!) { createUser(input: $input) { userErrors { code } } }',
      variables: { input: { userId: 'big-body', email: 'big-body@example.com', name: 'n'.repeat(200_000) } },
    });
    expect(response.status).toBe(413);
  });

  it('refuses a batched array of operations with 400, running none of them', async () => {
    const createUser = (userId: string) => ({
      query: `mutation { createUser(input: { userId: "${userId}", email: "${userId}@example.com", name: "B" }) { user { userId } } }`,
    });
    const response = await post([createUser('batched-1'), createUser('batched-2')]);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text)).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('changed nothing in the table', async () => {
    expect(await snapshot()).toEqual(before);
  });
});

/** Three fields deep, and a page of 60: a cost of about 120. */
const COST_60 = '{ products(category: "books", first: 60) { nodes { productId } } }';

describe('configurable limits', () => {
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startTestServer({
      limits: { ...DEFAULT_LIMITS, maxDepth: 3, maxAliases: 2, maxCost: 50, maxBodyBytes: 1000 },
    });
  });
  afterAll(() => strict.stop());

  it('the default server accepts what the strict one refuses', async () => {
    const responses = await Promise.all([
      server.gql(deepQuery(4)),
      server.gql(`{ ${aliases(3)} }`),
      server.gql(COST_60),
    ]);
    for (const response of responses) expect(response.errors).toBeUndefined();
  });

  it('refuses a document one field deeper than maxDepth 3', async () => {
    expect((await strict.gql(deepQuery(3))).errors).toBeUndefined();
    expectRefused(await strict.gql(deepQuery(4)), 'GRAPHQL_VALIDATION_FAILED', /depth limit of 3 exceeded, found 4/);
  });

  it('refuses a third alias under maxAliases 2', async () => {
    expectRefused(await strict.gql(`{ ${aliases(3)} }`), 'GRAPHQL_VALIDATION_FAILED', /Aliases limit of 2 exceeded/);
  });

  it('refuses a page of 60 under maxCost 50', async () => {
    expectRefused(await strict.gql(COST_60), 'QUERY_TOO_COMPLEX', /limit of 50/);
  });

  it('refuses a body over maxBodyBytes 1000 with 413', async () => {
    const response = await fetch(strict.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ __typename }${' '.repeat(1000)}` }),
    });
    expect(response.status).toBe(413);
  });
});

/** Values that must never become part of a key. */
const HOSTILE_IDS: [string, string][] = [
  ['a # forging a sort key', 'alice#PROFILE'],
  ['a key prefix', 'ORDER#demo-bob-001'],
  ['a NUL', 'alice\u0000'],
  ['a newline', 'alice\nbob'],
  ['a space', 'alice bob'],
  ['a path', '../alice'],
  ['non-ASCII letters', 'ålice'],
  ['an empty string', ''],
  ['65 characters', 'a'.repeat(65)],
  ['1000 characters', 'a'.repeat(1000)],
];

const HOSTILE_EMAILS: [string, string][] = [
  ['a #', 'alice#x@example.com'],
  ['a forged guard key', 'bob@example.com#UNIQUE'],
  ['a NUL', 'alice@example.com\u0000'],
  ['a newline', 'alice@example.com\nbob@example.com'],
  ['no @', 'alice.example.com'],
  ['1000 characters', `${'a'.repeat(1000)}@example.com`],
];

const HOSTILE_CATEGORIES: [string, string][] = [
  ['a #', 'books#PRODUCT'],
  ['a key prefix', 'CATEGORY#books'],
  ['a NUL', 'books\u0000'],
  ['1000 characters', 'b'.repeat(1000)],
];

/** [argument, document taking $v, the argumentName the refusal names, how $v is built from the value]. */
const QUERY_ARGUMENTS: [string, string, string, (value: string) => unknown][] = [
  ['user(userId)', 'query($v: ID!) { user(userId: $v) { userId } }', 'userId', (v) => v],
  ['order(orderId)', 'query($v: ID!) { order(orderId: $v) { orderId } }', 'orderId', (v) => v],
  ['product(productId)', 'query($v: ID!) { product(productId: $v) { productId } }', 'productId', (v) => v],
  ['node(id) of a User', 'query($v: ID!) { node(id: $v) { id } }', 'id', (v) => toGlobalId('User', v)],
  ['node(id) of an Order', 'query($v: ID!) { node(id: $v) { id } }', 'id', (v) => toGlobalId('Order', v)],
  ['node(id) as given', 'query($v: ID!) { node(id: $v) { id } }', 'id', (v) => v],
  [
    'nodes(ids)',
    'query($v: [ID!]!) { nodes(ids: $v) { id } }',
    'ids',
    (v) => [toGlobalId('Product', 'tent-2p'), toGlobalId('Product', v)],
  ],
];

const MUTATION_ARGUMENTS: [string, string, string[], (value: string) => Record<string, unknown>][] = [
  ['createUser.userId', 'createUser', ['userId'], (v) => ({ userId: v, email: 'x1@example.com', name: 'X' })],
  ['updateUser.userId', 'updateUser', ['userId'], (v) => ({ userId: v, expectedVersion: 1, name: 'X' })],
  [
    'createProduct.productId',
    'createProduct',
    ['productId'],
    (v) => ({ productId: v, name: 'X', description: 'x', category: 'books', price: '1.00', stock: 1 }),
  ],
  ['updateProduct.productId', 'updateProduct', ['productId'], (v) => ({ productId: v, expectedVersion: 1, stock: 1 })],
  [
    'placeOrder.userId',
    'placeOrder',
    ['userId'],
    (v) => ({ userId: v, items: [{ productId: 'tent-2p', quantity: 1 }], idempotencyKey: 'k-1' }),
  ],
  [
    'placeOrder.items.productId',
    'placeOrder',
    ['items', '1', 'productId'],
    (v) => ({
      userId: 'alice',
      items: [
        { productId: 'tent-2p', quantity: 1 },
        { productId: v, quantity: 1 },
      ],
      idempotencyKey: 'k-2',
    }),
  ],
  [
    'placeOrder.idempotencyKey',
    'placeOrder',
    ['idempotencyKey'],
    (v) => ({ userId: 'alice', items: [{ productId: 'tent-2p', quantity: 1 }], idempotencyKey: v }),
  ],
  ['cancelOrder.orderId', 'cancelOrder', ['orderId'], (v) => ({ orderId: v })],
  ['updateOrderStatus.orderId', 'updateOrderStatus', ['orderId'], (v) => ({ orderId: v, status: 'SHIPPED' })],
];

const INPUT_TYPES: Record<string, string> = {
  createUser: 'CreateUserInput',
  updateUser: 'UpdateUserInput',
  createProduct: 'CreateProductInput',
  updateProduct: 'UpdateProductInput',
  placeOrder: 'PlaceOrderInput',
  cancelOrder: 'CancelOrderInput',
  updateOrderStatus: 'UpdateOrderStatusInput',
};

const mutate = (field: string, input: Record<string, unknown>) =>
  server.gql(
    `mutation($input: ${INPUT_TYPES[field]}!) { ${field}(input: $input) { __typename userErrors { code field message } } }`,
    { input },
  );

/** A refusal of an argument: BAD_USER_INPUT naming it, nothing read, nothing of the value echoed in full. */
function expectBadArgument(response: GraphQLResponse, argumentName: string, value: string): void {
  expect(response.status).toBe(200);
  expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
  expect(response.errors?.[0]?.extensions?.argumentName).toBe(argumentName);
  expect(response.extensions?.cost?.dynamodb.requests).toBe(0);
  if (value.length > 64) expect(JSON.stringify(response)).not.toContain(value);
}

/** A refusal of a mutation input field: INVALID_INPUT on that field, nothing sent to DynamoDB. */
function expectInvalidInput(response: GraphQLResponse, field: string, path: string[]): void {
  expect(response.errors).toBeUndefined();
  const payload = response.data?.[field] as { userErrors: { code: string; field: string[] }[] };
  expect(payload.userErrors).toEqual([{ code: 'INVALID_INPUT', field: path, message: expect.any(String) }]);
  expect(response.extensions?.cost?.dynamodb.requests).toBe(0);
}

const cross = <A extends unknown[], B extends unknown[]>(as: A[], bs: B[]): [...A, ...B][] =>
  as.flatMap((a) => bs.map((b) => [...a, ...b] as [...A, ...B]));

describe('key-injection values on every argument', () => {
  let before: Item[];
  beforeAll(async () => {
    before = await snapshot();
  });

  it.each(cross(QUERY_ARGUMENTS, HOSTILE_IDS))(
    '%s refuses an id with %s',
    async (_, query, argumentName, variable, __, value) => {
      expectBadArgument(await server.gql(query, { v: variable(value) }), argumentName, value);
    },
  );

  it.each(HOSTILE_EMAILS)('userByEmail(email) refuses an email with %s', async (_, email) => {
    expectBadArgument(
      await server.gql('query($v: String!) { userByEmail(email: $v) { userId } }', { v: email }),
      'email',
      email,
    );
  });

  it.each(HOSTILE_CATEGORIES)('products(category) refuses a category with %s', async (_, category) => {
    expectBadArgument(
      await server.gql('query($v: String!) { products(category: $v) { nodes { productId } } }', { v: category }),
      'category',
      category,
    );
  });

  it.each([
    ['a raw key', 'USER#bob'],
    ['a key as JSON in base64url', Buffer.from(JSON.stringify({ PK: 'USER#bob', SK: 'ORDER#' })).toString('base64url')],
    ['a NUL', 'c1.\u0000'],
    ['1000 characters', 'c'.repeat(1000)],
  ])('User.orders(after) refuses a cursor that is %s', async (_, cursor) => {
    const response = await server.gql(
      'query($c: String) { user(userId: "alice") { orders(first: 2, after: $c) { nodes { orderId } } } }',
      { c: cursor },
    );
    expect(errorCodes(response)).toEqual(['BAD_USER_INPUT']);
    expect(JSON.stringify(response)).not.toContain('demo-bob');
  });

  it.each(cross(MUTATION_ARGUMENTS, HOSTILE_IDS))(
    '%s refuses an id with %s as INVALID_INPUT',
    async (_, field, path, input, __, value) => {
      expectInvalidInput(await mutate(field, input(value)), field, path);
    },
  );

  it.each(cross([['createUser'], ['updateUser']] as [string][], HOSTILE_EMAILS))(
    '%s.email refuses an email with %s as INVALID_INPUT',
    async (field, _, email) => {
      const input =
        field === 'createUser'
          ? { userId: 'mallory', email, name: 'Mallory' }
          : { userId: 'alice', expectedVersion: 1, email };
      expectInvalidInput(await mutate(field, input), field, ['email']);
    },
  );

  it.each(cross([['createProduct'], ['updateProduct']] as [string][], HOSTILE_CATEGORIES))(
    '%s.category refuses a category with %s as INVALID_INPUT',
    async (field, _, category) => {
      const input =
        field === 'createProduct'
          ? { productId: 'hostile', name: 'X', description: 'x', category, price: '1.00', stock: 1 }
          : { productId: 'tent-2p', expectedVersion: 1, category };
      expectInvalidInput(await mutate(field, input), field, ['category']);
    },
  );

  it.each([
    ['a name of 10,000 characters', { name: 'n'.repeat(10_000) }, ['name']],
    ['a name with a NUL', { name: 'Mallory\u0000' }, ['name']],
    ['a name of spaces only', { name: '   ' }, ['name']],
  ])('createUser refuses %s as INVALID_INPUT', async (_, override, path) => {
    expectInvalidInput(
      await mutate('createUser', { userId: 'mallory', email: 'mallory@example.com', ...override }),
      'createUser',
      path,
    );
  });

  it.each([
    ['a quantity of 0', 0],
    ['a negative quantity', -5],
    ['a quantity over the cap', 1001],
  ])('placeOrder refuses %s as INVALID_INPUT', async (_, quantity) => {
    expectInvalidInput(
      await mutate('placeOrder', { userId: 'alice', items: [{ productId: 'tent-2p', quantity }], idempotencyKey: 'q' }),
      'placeOrder',
      ['items', '0', 'quantity'],
    );
  });

  it('changed nothing in the table', async () => {
    expect(await snapshot()).toEqual(before);
  });
});
