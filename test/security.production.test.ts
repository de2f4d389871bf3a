/**
 * Production settings under attack: introspection off, no schema hints in error messages,
 * unexpected failures masked (no AWS or DynamoDB message, table or key name, stack trace),
 * persisted-only mode running the manifest and nothing else, and the configuration refusing
 * to start production without its secrets.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, DEFAULT_LIMITS, DEV_JWT_SECRET, loadServerConfig } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { loadPersistedDocuments } from '../src/pipeline/documents/persistedDocuments.js';
import type { Item } from '../src/table/codecs.js';
import { failOnIds } from './support/faults.js';
import { errorCodes, startTestServer, tokenFor } from './support/harness.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';
import { scanTable } from './support/writes.js';

/** Ids that make the server's own DynamoDB client fail, as a real AWS error would. */
const LEAKY_ID = 'leaky-item';
const THROTTLED_ID = 'throttled-item';

let locked: TestServer;
let production: TestServer;
let development: TestServer;
beforeAll(async () => {
  // Express reads NODE_ENV when an app is created: these servers are production ones throughout.
  vi.stubEnv('NODE_ENV', 'production');
  [locked, production] = await Promise.all([
    startTestServer({ introspection: false, playground: false, persistedOnly: true }),
    startTestServer({
      introspection: false,
      playground: false,
      configureClient: failOnIds({ leaky: LEAKY_ID, throttled: THROTTLED_ID }),
    }),
  ]);
  vi.unstubAllEnvs();
  development = await startTestServer();
  await Promise.all(
    [locked, production, development].map((server) => putItems(server.dynamo.doc, server.tableName, demoItems())),
  );
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await Promise.all([locked?.stop(), production?.stop(), development?.stop()]);
});

const snapshot = (server: TestServer) => scanTable(server.dynamo.doc, server.tableName);

describe('introspection switched off', () => {
  it.each([
    ['__schema', '{ __schema { types { name } } }'],
    ['__type', '{ __type(name: "User") { fields { name } } }'],
    ['an aliased __schema', '{ s: __schema { queryType { name } } }'],
    ['__schema inside a fragment', '{ ...F } fragment F on Query { __schema { types { name } } }'],
  ])('refuses %s with 400 and no data', async (_, query) => {
    const response = await production.gql(query);
    expect(response.status).toBe(400);
    expect(response).not.toHaveProperty('data');
    expect(errorCodes(response)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(JSON.stringify(response)).not.toContain('"Mutation"');
  });

  it('still answers __typename', async () => {
    expect((await production.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });
  });

  it('is on in development (the refusal above is the setting, not the query)', async () => {
    const response = await development.gql('{ __schema { queryType { name } } }');
    expect(response.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

/** [mistake, document, variables, the schema name a suggestion would reveal]. */
const MISTAKES: [string, string, Record<string, unknown>, string][] = [
  ['a misspelt field', '{ produc(productId: "x") { name } }', {}, '"product"'],
  ['a misspelt argument', '{ product(productId: "x", productID: "x") { name } }', {}, '"productId"'],
  ['a misspelt type', '{ node(id: "x") { ... on Usr { userId } } }', {}, '"User"'],
  [
    'a misspelt input field',
    'mutation { createUser(input: { userld: "x", email: "x@example.com", name: "X" }) { userErrors { code } } }',
    {},
    '"userId"',
  ],
  [
    'a misspelt input field in variables',
    'mutation($i: CreateUserInput!) { createUser(input: $i) { userErrors { code } } }',
    { i: { userld: 'x', email: 'x@example.com', name: 'X' } },
    '"userId"',
  ],
  ['a misspelt enum value', '{ user(userId: "alice") { orders(status: SHIPED) { totalCount } } }', {}, '"SHIPPED"'],
  [
    'a misspelt enum value in variables',
    'query($s: OrderStatus) { user(userId: "alice") { orders(status: $s) { totalCount } } }',
    { s: 'SHIPED' },
    '"SHIPPED"',
  ],
  ['a field of an implementation asked of the interface', '{ node(id: "x") { orders { totalCount } } }', {}, '"User"'],
];

describe('error messages with introspection off', () => {
  it('suggest names in development (so the assertions below can fail)', async () => {
    const response = await development.gql('{ produc(productId: "x") { name } }');
    expect(response.errors?.[0]?.message).toMatch(/Did you mean "product"/);
  });

  it.each(MISTAKES)('name nothing of the schema after %s', async (_, query, variables, revealed) => {
    const response = await production.gql(query, variables);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    const messages = (response.errors ?? []).map((error) => error.message).join('\n');
    expect(messages).not.toBe('');
    expect(messages).not.toMatch(/did you mean/i);
    expect(messages).not.toContain(revealed);
  });
});

describe('unexpected failures', () => {
  let before: Item[];
  beforeAll(async () => {
    before = await snapshot(production);
  });

  /** The masked error: nothing of the original error, no internals anywhere in the errors. */
  function expectMasked(response: GraphQLResponse): void {
    expect(response.errors).toHaveLength(1);
    const [error] = response.errors ?? [];
    expect(error?.message).toBe('Internal server error');
    expect(error?.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR' });
    const errorsText = JSON.stringify(response.errors);
    for (const internal of [
      production.tableName,
      'DynamoDB',
      'AWS',
      'ConditionalCheckFailed',
      'PRODUCT#',
      LEAKY_ID,
      'REQ123',
      'stacktrace',
      '    at ',
      'node_modules',
    ]) {
      expect(errorsText).not.toContain(internal);
    }
  }

  it.each([
    ['a product read', `{ product(productId: "${LEAKY_ID}") { name } }`, { product: null }],
    ['an order read', `{ order(orderId: "${LEAKY_ID}") { orderId } }`, { order: null }],
    [
      'a node read',
      `{ node(id: "${Buffer.from(`Product:${LEAKY_ID}`).toString('base64url')}") { id } }`,
      { node: null },
    ],
    ['a cancellation', `mutation { cancelOrder(input: { orderId: "${LEAKY_ID}" }) { userErrors { code } } }`, null],
    [
      'a product creation',
      `mutation { createProduct(input: { productId: "${LEAKY_ID}", name: "L", description: "l", category: "leaks", price: "1.00", stock: 1 }) { userErrors { code } } }`,
      null,
    ],
  ])('in %s answer "Internal server error" and nothing else', async (_, query, data) => {
    const response = await production.gql(query);
    expectMasked(response);
    expect(response.data).toEqual(data);
  });

  it('that mean DynamoDB is throttling answer SERVICE_UNAVAILABLE, without the AWS message', async () => {
    const response = await production.gql(`{ product(productId: "${THROTTLED_ID}") { name } }`);
    expect(errorCodes(response)).toEqual(['SERVICE_UNAVAILABLE']);
    const errorsText = JSON.stringify(response.errors);
    for (const internal of [production.tableName, 'DynamoDB', 'AWS', 'Rate of requests', THROTTLED_ID]) {
      expect(errorsText).not.toContain(internal);
    }
  });

  it('leave the fields that did not fail intact', async () => {
    const response = await production.gql(`{ __typename broken: product(productId: "${LEAKY_ID}") { name } }`);
    expect(response.data).toEqual({ __typename: 'Query', broken: null });
    expectMasked(response);
  });

  it.each([
    ['a body over the size limit (413)', `{"query": "{ __typename }${' '.repeat(DEFAULT_LIMITS.maxBodyBytes)}"}`, 413],
    ['a body that is not JSON (400)', '{"query": ', 400],
  ])('in HTTP parsing of %s show no stack trace and answer in GraphQL shape', async (_, body, status) => {
    const response = await fetch(production.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(status);
    const text = await response.text();
    expect(text).not.toMatch(/\n\s+at |&nbsp;at |node_modules|Error:/);
    const { errors } = JSON.parse(text) as { errors: { extensions: { code: string } }[] };
    expect(errors[0]?.extensions.code).toBe(status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST');
  });

  it('changed nothing in the table', async () => {
    expect(await snapshot(production)).toEqual(before);
  });
});

describe('persisted-only mode', () => {
  const documents = loadPersistedDocuments();
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const hashOf = (operation: string) => {
    const entry = [...documents].find(([, document]) => document.startsWith(operation));
    if (!entry) throw new Error(`the manifest has no ${operation}`);
    return entry;
  };
  const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

  async function post(body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(locked.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as GraphQLResponse };
  }

  let before: Item[];
  beforeAll(async () => {
    before = await snapshot(locked);
  });

  it('runs a manifest document sent by its hash', async () => {
    const [hash] = hashOf('query CategoryPage');
    const response = await post({ variables: { category: 'books', first: 2 }, extensions: persisted(hash) });
    expect(response.status).toBe(200);
    expect(response.body.data?.products).toMatchObject({ nodes: [{}, {}] });
  });

  it('runs a manifest document sent in full', async () => {
    const [, document] = hashOf('query CategoryPage');
    const response = await post({ query: document, variables: { category: 'books', first: 1 } });
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
  });

  it('still applies authorization to manifest documents', async () => {
    const [hash] = hashOf('query UserOrdersPage');
    const request = { variables: { userId: 'alice', first: 1 }, extensions: persisted(hash) };
    const own = await post(request, { authorization: `Bearer ${await tokenFor('alice')}` });
    const foreign = await post(request, { authorization: `Bearer ${await tokenFor('bob')}` });
    expect(own.body.data?.user).toMatchObject({ userId: 'alice' });
    expect(foreign.body.data).toEqual({ user: null });
    const [orderHash] = hashOf('mutation PlaceOrder');
    const anonymous = await post({
      variables: { input: { userId: 'alice', items: [{ productId: 'tent-2p', quantity: 1 }], idempotencyKey: 'x' } },
      extensions: persisted(orderHash),
    });
    expect(errorCodes(anonymous.body)).toEqual(['UNAUTHENTICATED']);
  });

  it.each<[string, () => unknown]>([
    ['a document outside the manifest', () => ({ query: '{ product(productId: "tent-2p") { name } }' })],
    ['an introspection query', () => ({ query: '{ __schema { types { name } } }' })],
    [
      'a manifest document with one field added',
      () => ({
        query: hashOf('query CategoryPage')[1].replace('stock', 'stock version'),
        variables: { category: 'books' },
      }),
    ],
    [
      'a new document registered with its own hash (APQ)',
      () => {
        const query = '{ product(productId: "tent-2p") { name } }';
        return { query, extensions: persisted(sha256(query)) };
      },
    ],
    ['an unknown hash', () => ({ extensions: persisted(sha256('anything')) })],
    [
      "a manifest document's hash with another document",
      () => ({ query: '{ __typename }', extensions: persisted(hashOf('query CategoryPage')[0]) }),
    ],
    [
      'a mutation outside the manifest',
      () => ({
        query: 'mutation { createUser(input: { userId: "p", email: "p@example.com", name: "P" }) { user { userId } } }',
      }),
    ],
    ['a batch of manifest documents', () => [{ extensions: persisted(hashOf('query CategoryPage')[0]) }]],
  ])('refuses %s with 400 PERSISTED_QUERY_REQUIRED', async (_, body) => {
    const response = await post(body(), { authorization: `Bearer ${await tokenFor('admin', 'admin')}` });
    expect(response.status).toBe(400);
    expect(response.body).not.toHaveProperty('data');
    expect(errorCodes(response.body)).toEqual(['PERSISTED_QUERY_REQUIRED']);
  });

  it('refuses a GET of a document outside the manifest', async () => {
    const params = new URLSearchParams({ query: '{ product(productId: "tent-2p") { name } }' });
    const response = await fetch(`${locked.url}?${params.toString()}`, {
      headers: { 'apollo-require-preflight': 'true', accept: 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_REQUIRED' } }] });
  });

  it('changed nothing in the table', async () => {
    expect(await snapshot(locked)).toEqual(before);
  });
});

describe('loadServerConfig in production', () => {
  const SECRET = 's'.repeat(40);
  // Production refuses the embedded DynamoDB Local: these configurations name an endpoint.
  const PRODUCTION = {
    NODE_ENV: 'production',
    CURSOR_SECRET: SECRET,
    JWT_SECRET: SECRET,
    DYNAMODB_ENDPOINT: 'http://dynamodb.internal:8000',
  };
  const JWKS = { JWT_JWKS_URL: 'https://id.example.test/.well-known/jwks.json' };
  const without = (env: Record<string, string>, ...names: string[]) =>
    Object.fromEntries(Object.entries(env).filter(([name]) => !names.includes(name)));

  it.each<[string, Record<string, string>, RegExp]>([
    ['without CURSOR_SECRET', without(PRODUCTION, 'CURSOR_SECRET'), /CURSOR_SECRET/],
    ['with an empty CURSOR_SECRET', { ...PRODUCTION, CURSOR_SECRET: '' }, /CURSOR_SECRET/],
    ['without JWT_SECRET or JWT_JWKS_URL', without(PRODUCTION, 'JWT_SECRET'), /JWT_SECRET or JWT_JWKS_URL/],
    ['with a JWT_SECRET shorter than 32 characters', { ...PRODUCTION, JWT_SECRET: 'short-secret' }, /at least 32/],
    [
      'with JWT_JWKS_URL but no issuer or audience',
      { ...without(PRODUCTION, 'JWT_SECRET'), ...JWKS },
      /JWT_ISSUER and JWT_AUDIENCE/,
    ],
    [
      'with JWT_JWKS_URL and no JWT_AUDIENCE',
      { ...without(PRODUCTION, 'JWT_SECRET'), ...JWKS, JWT_ISSUER: 'https://id.example.test/' },
      /JWT_AUDIENCE/,
    ],
    [
      'with JWT_JWKS_URL and no JWT_ISSUER',
      { ...without(PRODUCTION, 'JWT_SECRET'), ...JWKS, JWT_AUDIENCE: 'tablegraph-api' },
      /JWT_ISSUER/,
    ],
    [
      'with the development JWT secret that ships in the source',
      { ...PRODUCTION, JWT_SECRET: DEV_JWT_SECRET },
      /JWT_SECRET/,
    ],
    ['with a query limit that is not a positive integer', { ...PRODUCTION, MAX_QUERY_DEPTH: '0' }, /MAX_QUERY_DEPTH/],
    ['with a body limit that is not a number', { ...PRODUCTION, MAX_BODY_BYTES: '1mb' }, /MAX_BODY_BYTES/],
    [
      'with the embedded DynamoDB Local',
      { ...without(PRODUCTION, 'DYNAMODB_ENDPOINT'), DYNAMODB_MODE: 'embedded' },
      /refuses the embedded DynamoDB Local/,
    ],
    ['with the embedded DynamoDB Local by default', without(PRODUCTION, 'DYNAMODB_ENDPOINT'), /DYNAMODB_MODE=aws/],
    ['with a JWT_MAX_AGE that is not a duration', { ...PRODUCTION, JWT_MAX_AGE: 'forever' }, /JWT_MAX_AGE/],
  ])('refuses to start %s', (_, env, message) => {
    expect(() => loadServerConfig(env)).toThrow(ConfigError);
    expect(() => loadServerConfig(env)).toThrow(message);
  });

  it('reads JWT_MAX_AGE as seconds or a duration, listens on every interface, keeps /metrics on the main port', () => {
    expect(loadServerConfig({ ...PRODUCTION, JWT_MAX_AGE: '30m' }).auth.maxAgeSeconds).toBe(1800);
    expect(loadServerConfig({ ...PRODUCTION, JWT_MAX_AGE: '3600' }).auth.maxAgeSeconds).toBe(3600);
    const config = loadServerConfig(PRODUCTION);
    expect(config.host).toBe('0.0.0.0');
    expect(config.metrics).toEqual({ token: undefined, port: undefined });
    expect(config.costDetails).toBe('admin');
  });

  it('refuses JWT_JWKS_URL without issuer and audience outside production too', () => {
    expect(() => loadServerConfig(JWKS)).toThrow(/JWT_ISSUER and JWT_AUDIENCE/);
  });

  it('starts with its secrets, with introspection, playground and persisted-only as production wants them', () => {
    const config = loadServerConfig(PRODUCTION);
    expect(config).toMatchObject({
      nodeEnv: 'production',
      cursorSecret: SECRET,
      introspection: false,
      playground: false,
      persistedOnly: false,
      auth: { secret: SECRET, jwksUrl: undefined },
      limits: DEFAULT_LIMITS,
    });
  });

  it('turns introspection, the playground and persisted-only mode on only when asked', () => {
    const config = loadServerConfig({
      ...PRODUCTION,
      GRAPHQL_INTROSPECTION: 'true',
      PLAYGROUND: 'true',
      PERSISTED_ONLY: 'true',
    });
    expect(config).toMatchObject({ introspection: true, playground: true, persistedOnly: true });
  });

  it('verifies with the JWKS alone when one is configured, never with a development secret', () => {
    const config = loadServerConfig({
      ...without(PRODUCTION, 'JWT_SECRET'),
      ...JWKS,
      JWT_ISSUER: 'https://id.example.test/',
      JWT_AUDIENCE: 'tablegraph-api',
    });
    expect(config.auth).toEqual({
      secret: undefined,
      jwksUrl: JWKS.JWT_JWKS_URL,
      issuer: 'https://id.example.test/',
      audience: 'tablegraph-api',
      maxAgeSeconds: 24 * 3600,
    });
  });

  it('reads every query limit from the environment', () => {
    const config = loadServerConfig({
      ...PRODUCTION,
      MAX_QUERY_DEPTH: '3',
      MAX_QUERY_ALIASES: '4',
      MAX_QUERY_DIRECTIVES: '5',
      MAX_QUERY_TOKENS: '600',
      MAX_SELECTION_SET_FIELDS: '60',
      MAX_REPEATED_FIELD_PAIRS: '61',
      MAX_SELECTIONS: '620',
      MAX_QUERY_COST: '700',
      MAX_BODY_BYTES: '8000',
      MAX_RESPONSE_BYTES: '90000',
      MAX_OPERATION_REQUESTS: '7',
      MAX_OPERATION_READ_UNITS: '70',
      MAX_RESULT_ENTRIES: '700',
      SUBSCRIBE_READS_PER_VIEWER: '8',
      SUBSCRIBE_READS_PER_INSTANCE: '80',
      SUBSCRIBE_READ_WINDOW_MS: '800',
    });
    expect(config.limits).toEqual({
      maxDepth: 3,
      maxAliases: 4,
      maxDirectives: 5,
      maxTokens: 600,
      maxSelectionSetFields: 60,
      maxRepeatedFieldPairs: 61,
      maxSelections: 620,
      maxCost: 700,
      maxBodyBytes: 8000,
      maxResponseBytes: 90000,
      maxOperationRequests: 7,
      maxOperationReadUnits: 70,
      maxResultEntries: 700,
      // MAX_RESPONSE_BYTES bounds the answer's estimate while it is built too.
      maxResultBytes: 90000,
      subscribeReadsPerViewer: 8,
      subscribeReadsPerInstance: 80,
      subscribeReadWindowMs: 800,
    });
  });
});
