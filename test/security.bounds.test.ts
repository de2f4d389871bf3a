/**
 * Every resource a client can make the server spend is bounded, and nothing tells another
 * user's data from missing data: the list-aware cost limit, the response-size ceiling, capped
 * userErrors, bounded metric labels, token lifetime, identity from the token, Unicode rules
 * and category case. Through the real server (HTTP, and the Lambda handler where the policy
 * lives in the shared GraphQL server).
 */
import net from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, loadServerConfig } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { MAX_USER_ERRORS } from '../src/table/limits.js';
import { anOrder, aProduct, aUser, store } from './support/factories.js';
import { startTestServer, TEST_AUTH, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { codesOf, transportsOf } from './support/transports.js';
import type { TransportName, Transports } from './support/transports.js';
import { scanTable } from './support/writes.js';

let server: TestServer;
let transports: Transports;
const me = aUser({ userId: 'bounds-me', email: 'bounds-me@example.com' });
const other = aUser({ userId: 'bounds-other', email: 'bounds-other@example.com' });
const product = aProduct({ productId: 'bounds-product' });
const theirs = anOrder(other, [product], { orderId: 'bounds-their-order' });
let before: unknown;

beforeAll(async () => {
  server = await startTestServer();
  await putItems(server.dynamo.doc, server.tableName, demoItems());
  await store(server.dynamo.doc, server.tableName, { users: [me, other], products: [product], orders: [theirs] });
  transports = await transportsOf(server);
  before = await scanTable(server.dynamo.doc, server.tableName);
});
afterAll(async () => {
  transports.stop();
  await server.stop();
});

const bearer = async (userId: string, role: 'customer' | 'admin' = 'customer') =>
  `Bearer ${await tokenFor(userId, role)}`;
const TRANSPORTS: TransportName[] = ['HTTP', 'Lambda'];
/** The policies of the GraphQL server that graphql-ws applies too. */
const EVERY_TRANSPORT: TransportName[] = ['HTTP', 'Lambda', 'WebSocket'];
/** A refusal before execution: HTTP 400 where there is HTTP (WebSocket messages have no status). */
const expectRefusalStatus = (name: TransportName, status: number | null) =>
  expect(status).toBe(name === 'WebSocket' ? null : 400);

/** Twelve aliases of orders(first: 100) down to each line's product description. */
const TWELVE_ALIASES = `{ user(userId: "alice") { ${Array.from(
  { length: 12 },
  (_, i) => `a${i}: orders(first: 100) { nodes { items { product { description } } } }`,
).join(' ')} } }`;

describe('the cost limit counts every list', () => {
  it.each(EVERY_TRANSPORT)(
    'refuses twelve aliased orders(first: 100) down to every line, over %s, before any read',
    async (name) => {
      const outcome = await transports.send(name, { query: TWELVE_ALIASES }, await tokenFor('admin', 'admin'));
      expectRefusalStatus(name, outcome.status);
      expect(codesOf(outcome)).toEqual(['QUERY_TOO_COMPLEX']);
      expect(outcome.errors[0]?.extensions?.cost).toBeGreaterThan(100_000);
      expect(outcome.extensions?.cost?.dynamodb.requests ?? 0).toBe(0);
    },
  );

  it('still accepts a page of 20 orders with their lines and products', async () => {
    const response = await server.gql(
      '{ user(userId: "alice") { orders(first: 20) { nodes { orderId items { quantity product { name } } } } } }',
    );
    expect(response.errors).toBeUndefined();
  });
});

describe('the response-size ceiling', () => {
  let small: TestServer;
  let smallTransports: Transports;
  const MAX = 1000;
  beforeAll(async () => {
    const limits = { ...DEFAULT_LIMITS, maxResponseBytes: MAX };
    small = await startTestServer({ limits, tableName: server.tableName });
    smallTransports = await transportsOf(small, { limits });
  });
  afterAll(async () => {
    smallTransports.stop();
    await small.stop();
  });

  it.each(EVERY_TRANSPORT)('answers RESPONSE_TOO_LARGE instead of a response over the limit, over %s', async (name) => {
    const send = (query: string) => smallTransports.send(name, { query }, null);
    const outcome = await send(
      '{ products(category: "electronics", first: 50) { edges { cursor node { name description } } } }',
    );
    expect(codesOf(outcome)).toEqual(['RESPONSE_TOO_LARGE']);
    expectRefusalStatus(name, outcome.status);
    expect(outcome.errors[0]?.message).toMatch(/exceed the limit of 1000 bytes/);
    expect(outcome.data).toBeUndefined();
    expect(outcome.raw).not.toContain('"data"');
    expect(outcome.raw.length).toBeLessThan(MAX);
    const fits = await send('{ product(productId: "tent-2p") { name } }');
    expect(fits.data).toEqual({ product: { name: expect.any(String) } });
  });
});

describe('userErrors are bounded', () => {
  const PLACE = `mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { order { orderId } userErrors { code field message } } }`;
  const lines = (count: number) => Array.from({ length: count }, () => ({ productId: 'bad#id', quantity: 0 }));

  it('stops at the line-count error for an order of 1,800 invalid lines', async () => {
    const input = { userId: me.userId, idempotencyKey: 'many-lines', items: lines(1800) };
    const response = await server.gql(PLACE, { input }, { authorization: await bearer(me.userId) });
    expect(response.data?.placeOrder.userErrors).toEqual([
      { code: 'INVALID_INPUT', field: ['items'], message: expect.stringMatching(/at most 97 lines/) },
    ]);
    expect(JSON.stringify(response).length).toBeLessThan(1000);
  });

  it(`reports at most ${MAX_USER_ERRORS} problems, the last one counting the rest`, async () => {
    const input = { userId: me.userId, idempotencyKey: 'bad-lines', items: lines(60) };
    const response = await server.gql(PLACE, { input }, { authorization: await bearer(me.userId) });
    const errors = response.data?.placeOrder.userErrors as { field: string[] | null; message: string }[];
    expect(errors).toHaveLength(MAX_USER_ERRORS);
    expect(errors.at(-1)).toMatchObject({ field: null, message: expect.stringMatching(/^101 more problems/) });
  });
});

describe('metric labels', () => {
  it('labels unknown operation names "other", so /metrics stays small after 100 distinct names', async () => {
    const metrics = async () => (await fetch(server.url.replace('/graphql', '/metrics'))).text();
    const baseline = (await metrics()).length;
    // Ten at a time: each request is cheap, the point is the number of distinct names.
    for (let batch = 0; batch < 10; batch += 1) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          server.gql(
            `query Probe${batch * 10 + i}_${'x'.repeat(200)} { product(productId: "tent-2p") { name } }`,
            {},
            { authorization: '' },
          ),
        ),
      );
    }
    const text = await metrics();
    expect(text).not.toMatch(/Probe\d+_x/);
    expect(text).toMatch(/graphql_request_duration_seconds_count\{operation="other"\} \d+/);
    // Each distinct name would have added a histogram of 13 series (about 3 kB with a 200-character label).
    expect(text.length - baseline).toBeLessThan(5000);
  }, 60_000);

  it('labels a manifest operation by its name', async () => {
    await server.gql('query CategoryPage { products(category: "camping", first: 1) { nodes { name } } }', {});
    const text = await (await fetch(server.url.replace('/graphql', '/metrics'))).text();
    expect(text).toMatch(/operation="CategoryPage"/);
  });
});

describe('/metrics on a port of its own, behind METRICS_TOKEN', () => {
  let separate: TestServer;
  beforeAll(async () => {
    separate = await startTestServer({ tableName: server.tableName, metrics: { token: 'scrape-secret', port: 0 } });
  });
  afterAll(() => separate.stop());

  it('serves /metrics on METRICS_PORT only, to loopback or the right token', async () => {
    const main = new URL(separate.url);
    expect((await fetch(`${main.origin}/metrics`)).status).toBe(404);
    const metricsUrl = `http://127.0.0.1:${separate.app.metricsPort}/metrics`;
    expect((await fetch(metricsUrl)).status).toBe(200);
    expect((await fetch(metricsUrl, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const scraped = await fetch(metricsUrl, { headers: { authorization: 'Bearer scrape-secret' } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/graphql_request_duration_seconds/);
  });
});

describe('existence oracles', () => {
  const missingOrder = 'bounds-missing-order';
  it.each(TRANSPORTS)(
    "costs the same for another user's order or email as for a missing one, over %s",
    async (name) => {
      const token = await tokenFor(me.userId);
      const ask = (orderId: string, email: string) =>
        transports.send(
          name,
          {
            query: 'query($o: ID!, $e: String!) { order(orderId: $o) { orderId } userByEmail(email: $e) { userId } }',
            variables: { o: orderId, e: email },
          },
          token,
        );
      const notYours = await ask(theirs.orderId, other.email);
      const missing = await ask(missingOrder, 'nobody-here@example.com');
      expect(notYours.data).toEqual({ order: null, userByEmail: null });
      expect(missing.data).toEqual(notYours.data);
      expect(notYours.extensions).toEqual(missing.extensions);
      expect(notYours.extensions?.cost?.dynamodb).toEqual({ requests: 2 });
    },
  );

  it('shows capacity units to admins', async () => {
    const response = await server.gql('{ order(orderId: "bounds-their-order") { orderId } }');
    expect(response.extensions?.cost?.dynamodb.readCapacityUnits).toBeGreaterThan(0);
  });
});

describe('identity comes from the token', () => {
  const CREATE = `mutation($input: CreateUserInput!) { createUser(input: $input) { user { userId email } userErrors { code field } } }`;

  it.each(TRANSPORTS)('refuses createUser without a token, over %s', async (name) => {
    const outcome = await transports.send(
      name,
      { query: CREATE, variables: { input: { userId: 'squatter', email: 'future@example.com', name: 'S' } } },
      null,
    );
    expect(codesOf(outcome)).toEqual(['UNAUTHENTICATED']);
    expect((outcome.data as { createUser?: unknown } | null | undefined)?.createUser ?? null).toBeNull();
  });

  it.each(TRANSPORTS)('refuses a customer naming another userId, over %s', async (name) => {
    const outcome = await transports.send(
      name,
      { query: CREATE, variables: { input: { userId: 'someone-else', email: 'someone-else@example.com', name: 'S' } } },
      await tokenFor('signing-up'),
    );
    expect(codesOf(outcome)).toEqual(['FORBIDDEN']);
  });

  it("makes the profile of the token's subject", async () => {
    const response = await server.gql(
      CREATE,
      { input: { email: 'sub-user@example.com', name: 'Sub' } },
      { authorization: await bearer('sub-user') },
    );
    expect(response.data?.createUser).toEqual({
      user: { userId: 'sub-user', email: 'sub-user@example.com' },
      userErrors: [],
    });
  });

  it('lets an admin name the userId', async () => {
    const response = await server.gql(CREATE, {
      input: { userId: 'named-by-admin', email: 'named@example.com', name: 'N' },
    });
    expect(response.data?.createUser.user).toEqual({ userId: 'named-by-admin', email: 'named@example.com' });
  });

  it('takes the verified email claim, and refuses another address', async () => {
    const token = await new SignJWT({ role: 'customer', email: 'Verified@Example.com', email_verified: true })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('verified-user')
      .setIssuer(TEST_AUTH.issuer)
      .setAudience(TEST_AUTH.audience)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(TEST_AUTH.secret));
    const other = await server.gql(
      CREATE,
      { input: { email: 'victim@example.com', name: 'V' } },
      { authorization: `Bearer ${token}` },
    );
    expect(other.data?.createUser).toEqual({ user: null, userErrors: [{ code: 'INVALID_INPUT', field: ['email'] }] });
    const same = await server.gql(
      CREATE,
      { input: { email: 'verified@example.com', name: 'V' } },
      { authorization: `Bearer ${token}` },
    );
    expect(same.data?.createUser.user).toEqual({ userId: 'verified-user', email: 'verified@example.com' });
  });
});

describe('token lifetime', () => {
  const secret = new TextEncoder().encode(TEST_AUTH.secret);
  const now = () => Math.floor(Date.now() / 1000);
  const token = (iat: number, exp: number) =>
    new SignJWT({ role: 'customer' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(me.userId)
      .setIssuer(TEST_AUTH.issuer)
      .setAudience(TEST_AUTH.audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(secret);
  const YEAR_9999 = 253_402_300_799;

  it.each([
    ['issued 25 hours ago with exp in year 9999', () => token(now() - 25 * 3600, YEAR_9999), /older than the maximum/],
    ['issued an hour in the future', () => token(now() + 3600, now() + 7200), /issued in the future/],
  ])('refuses a token %s', async (_, make, message) => {
    const response = await server.gql('{ viewer { userId } }', {}, { authorization: `Bearer ${await make()}` });
    expect(response.status).toBe(401);
    expect(response.errors?.[0]?.message).toMatch(message);
  });

  it('accepts a token issued a moment ago', async () => {
    const response = await server.gql(
      '{ viewer { userId } }',
      {},
      { authorization: `Bearer ${await token(now() - 60, now() + 3600)}` },
    );
    expect(response.data?.viewer).toEqual({ userId: me.userId });
  });
});

describe('Unicode in names and emails', () => {
  const CREATE = `mutation($input: CreateUserInput!) { createUser(input: $input) { user { userId } userErrors { code field } } }`;
  it.each([
    ['a C1 control (U+0085)', { name: 'Ann\u0085' }, 'name'],
    ['a bidi override (U+202E)', { name: 'Ann\u202Egpj.exe' }, 'name'],
    ['a zero-width space (U+200B)', { name: 'An\u200Bn' }, 'name'],
    ['a line separator (U+2028)', { name: 'Ann\u2028Two' }, 'name'],
    ['a lone surrogate', { name: 'Ann\uD800' }, 'name'],
    ['a zero-width joiner in the email', { email: 'unicode-me\u200D@example.com' }, 'email'],
    ['a bidi override in the email', { email: 'unicode-me@exa\u202Emple.com' }, 'email'],
  ])('refuses %s with INVALID_INPUT', async (_, change, field) => {
    const input = { userId: 'unicode-refused', email: 'unicode-refused@example.com', name: 'Ann', ...change };
    const response = await server.gql(CREATE, { input });
    expect(response.data?.createUser).toEqual({ user: null, userErrors: [{ code: 'INVALID_INPUT', field: [field] }] });
  });

  it.each([
    ['fullwidth letters', 'ｂｏｕｎｄｓ-ｍｅ@example.com'],
    ['capitals and fullwidth', 'BOUNDS-ＭＥ@EXAMPLE.COM'],
  ])('treats an email in %s as the address it looks like (EMAIL_TAKEN)', async (_, email) => {
    const response = await server.gql(CREATE, { input: { userId: 'lookalike', email, name: 'L' } });
    expect(response.data?.createUser).toEqual({ user: null, userErrors: [{ code: 'EMAIL_TAKEN', field: ['email'] }] });
  });
});

describe('category case', () => {
  it('finds a product created as "Books" when asked for "Books" or "BOOKS"', async () => {
    const created = await server.gql(
      `mutation { createProduct(input: { productId: "case-book", name: "A Book", description: "d", category: "Books", price: "9.99", stock: 1 }) { product { category } userErrors { code } } }`,
    );
    expect(created.data?.createProduct).toEqual({ product: { category: 'books' }, userErrors: [] });
    for (const category of ['Books', 'BOOKS', ' books ']) {
      const response = await server.gql('query($c: String!) { products(category: $c) { nodes { productId } } }', {
        c: category,
      });
      expect(response.data?.products.nodes).toContainEqual({ productId: 'case-book' });
    }
  });
});

describe('slow and idle clients', () => {
  let tight: TestServer;
  beforeAll(async () => {
    tight = await startTestServer({
      tableName: server.tableName,
      http: { requestTimeoutMs: 1000, headersTimeoutMs: 500, maxConnections: 3 },
    });
  });
  afterAll(() => tight.stop());

  const socketTo = (url: string) => {
    const { port: p } = new URL(url);
    const socket = net.connect(Number(p), '127.0.0.1');
    const closed = new Promise<string>((resolve) => {
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => resolve(received));
      socket.on('error', () => undefined);
    });
    return { socket, closed, connected: new Promise<void>((resolve) => socket.once('connect', () => resolve())) };
  };

  it('closes a connection whose headers never finish, with 408', async () => {
    const { socket, closed, connected } = socketTo(tight.url);
    await connected;
    socket.write('POST /graphql HTTP/1.1\r\nHost: x\r\n');
    expect(await closed).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes connections past the cap at once', async () => {
    const held = Array.from({ length: 3 }, () => socketTo(tight.url));
    await Promise.all(held.map((entry) => entry.connected));
    const extra = socketTo(tight.url);
    expect(await extra.closed).toBe('');
    for (const entry of held) entry.socket.destroy();
  });

  it('listens on 127.0.0.1 by default outside production', () => {
    expect(loadServerConfig({}).host).toBe('127.0.0.1');
    expect(loadServerConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });
});

it('changed nothing in the table through its refusals but the writes it meant', async () => {
  const after = (await scanTable(server.dynamo.doc, server.tableName)) as { PK: string; SK: string }[];
  const old = new Set((before as object[]).map((item) => JSON.stringify(item)));
  // Entities only: the writes also keep their guards and counters (EMAIL#, META#) up to date.
  const entities = after
    .filter((item) => !old.has(JSON.stringify(item)))
    .map((item) => item.PK)
    .filter((pk) => /^(USER|PRODUCT|ORDER)#/.test(pk));
  expect(new Set(entities)).toEqual(
    new Set(['USER#sub-user', 'USER#named-by-admin', 'USER#verified-user', 'PRODUCT#case-book']),
  );
});
