/**
 * Authentication under attack, over HTTP: tokens the server did not issue (or issued for
 * someone else), malformed Authorization headers, and a JWKS configuration. Every refused
 * credential answers the whole request with 401 UNAUTHENTICATED and no data, reads and
 * writes alike, and leaves the table as it was.
 */
import { exportSPKI, SignJWT } from 'jose';
import type { CryptoKey, JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import type { Item } from '../src/table/codecs.js';
import { startJwksServer, startServerWithAuth } from './support/authServers.js';
import type { AuthTestServer, JwksServer } from './support/authServers.js';
import { aUser, store } from './support/factories.js';
import { startTestServer, TEST_AUTH, tokenFor } from './support/harness.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';
import { scanTable } from './support/writes.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await putItems(server.dynamo.doc, server.tableName, demoItems());
});
afterAll(() => server.stop());

const SECRET = new TextEncoder().encode(TEST_AUTH.secret);
const now = () => Math.floor(Date.now() / 1000);
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** What an attacker wants: alice's account with admin rights. */
const CLAIMS = { sub: 'alice', role: 'admin' };

interface TokenOptions {
  key?: Uint8Array | CryptoKey;
  alg?: string;
  kid?: string;
  issuer?: string | null;
  audience?: string | null;
  /** Seconds since the epoch; null leaves exp out. */
  exp?: number | null;
}

/** Signs `claims` with the test server's secret and issuer unless told otherwise. */
function sign(claims: JWTPayload, options: TokenOptions = {}): Promise<string> {
  const { key = SECRET, alg = 'HS256', kid, issuer = TEST_AUTH.issuer, audience = TEST_AUTH.audience } = options;
  const exp = options.exp === undefined ? now() + 3600 : options.exp;
  const jwt = new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT', ...(kid ? { kid } : {}) }).setIssuedAt();
  if (issuer !== null) jwt.setIssuer(issuer);
  if (audience !== null) jwt.setAudience(audience);
  if (exp !== null) jwt.setExpirationTime(exp);
  return jwt.sign(key);
}

/** `alg: none`, crafted by hand: header and payload, and an empty signature. */
const unsigned = (claims: JWTPayload, issuer = TEST_AUTH.issuer, audience = TEST_AUTH.audience) =>
  `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ ...claims, iss: issuer, aud: audience, iat: now(), exp: now() + 3600 })}.`;

const readQuery = '{ product(productId: "tent-2p") { name } viewer { userId } }';
const writeQuery = `mutation {
  createProduct(input: { productId: "forged-write", name: "Forged", description: "x", category: "forged", price: "1.00", stock: 1 }) {
    product { productId } userErrors { code }
  }
}`;

/** The one refusal a bad credential earns: 401, UNAUTHENTICATED, no data at all, nothing echoed. */
function expectUnauthenticated(response: GraphQLResponse, credential: string): void {
  expect(response.status).toBe(401);
  expect(response).not.toHaveProperty('data');
  expect(response.errors).toHaveLength(1);
  expect(response.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  if (credential.length > 16) expect(JSON.stringify(response)).not.toContain(credential);
}

const BAD_TOKENS: [string, () => Promise<string>][] = [
  ['signed with another secret', () => sign(CLAIMS, { key: new TextEncoder().encode('not-the-server-secret') })],
  ['that expired an hour ago', () => sign(CLAIMS, { exp: now() - 3600 })],
  ['that expired beyond the clock tolerance', () => sign(CLAIMS, { exp: now() - 30 })],
  ['that is not valid yet (nbf an hour ahead)', () => sign({ ...CLAIMS, nbf: now() + 3600 })],
  ['without exp', () => sign(CLAIMS, { exp: null })],
  ['for another audience', () => sign(CLAIMS, { audience: 'some-other-api' })],
  ['without an audience', () => sign(CLAIMS, { audience: null })],
  ['from another issuer', () => sign(CLAIMS, { issuer: 'https://evil.example' })],
  ['without an issuer', () => sign(CLAIMS, { issuer: null })],
  ['signed with HS512 and the right secret', () => sign(CLAIMS, { alg: 'HS512' })],
  ['with alg none and no signature', async () => unsigned(CLAIMS)],
  [
    'with alg none and a real signature kept',
    async () => `${unsigned(CLAIMS).slice(0, -1)}.${(await sign(CLAIMS)).split('.')[2]}`,
  ],
  [
    "with an admin payload under a customer token's signature",
    async () => {
      const [header, , signature] = (await tokenFor('alice', 'customer')).split('.');
      return `${header}.${b64url({ ...CLAIMS, iss: TEST_AUTH.issuer, aud: TEST_AUTH.audience, exp: now() + 3600 })}.${signature}`;
    },
  ],
  ['with role superuser', () => sign({ ...CLAIMS, role: 'superuser' })],
  ['with role ["admin"]', () => sign({ ...CLAIMS, role: ['admin'] })],
  ['without role', () => sign({ sub: 'alice' })],
  ['with a sub holding # (alice#PROFILE)', () => sign({ ...CLAIMS, sub: 'alice#PROFILE' })],
  ['with a sub holding a NUL', () => sign({ ...CLAIMS, sub: 'alice\u0000' })],
  ['with a 65-character sub', () => sign({ ...CLAIMS, sub: 'a'.repeat(65) })],
  ['with a numeric sub', () => sign({ ...CLAIMS, sub: 42 as unknown as string })],
  ['without sub', () => sign({ role: 'admin' })],
  ['with a header that is not JSON', async () => `${Buffer.from('{alg').toString('base64url')}.e30.`],
];

const BAD_HEADERS: [string, () => Promise<string>][] = [
  ['Bearer and garbage', async () => 'Bearer not-a-jwt'],
  ['Bearer and three empty parts', async () => 'Bearer ..'],
  ['Basic credentials', async () => `Basic ${Buffer.from('alice:password').toString('base64')}`],
  ['a valid token under another scheme', async () => `Token ${await tokenFor('alice', 'admin')}`],
  ['a valid token with no scheme', () => tokenFor('alice', 'admin')],
  ['Bearer with no token', async () => 'Bearer'],
  ['a valid token followed by more text', async () => `Bearer ${await tokenFor('alice', 'admin')} extra`],
  ['two tokens', async () => `Bearer ${await tokenFor('alice')}, Bearer ${await tokenFor('bob')}`],
  ['a token with characters outside base64url', async () => `Bearer ${(await tokenFor('alice')).replace('.', '.+/')}`],
  [
    'an over-long but correctly signed token (9 kB)',
    async () => `Bearer ${await sign({ ...CLAIMS, padding: 'x'.repeat(9000) })}`,
  ],
];

describe('tokens the server did not issue, or issued for something else', () => {
  let before: Item[];
  beforeAll(async () => {
    before = await scanTable(server.dynamo.doc, server.tableName);
  });

  it('accepts the token the bad ones are variations of', async () => {
    const response = await server.gql(readQuery, {}, { authorization: `Bearer ${await sign(CLAIMS)}` });
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ product: { name: 'Two-Person Tent' }, viewer: { userId: 'alice' } });
  });

  it.each(BAD_TOKENS)('refuses a read with a token %s: 401, no data', async (_, token) => {
    const jwt = await token();
    expectUnauthenticated(await server.gql(readQuery, {}, { authorization: `Bearer ${jwt}` }), jwt);
  });

  it.each(BAD_TOKENS)('refuses a write with a token %s: 401, no data', async (_, token) => {
    const jwt = await token();
    expectUnauthenticated(await server.gql(writeQuery, {}, { authorization: `Bearer ${jwt}` }), jwt);
  });

  it.each(BAD_HEADERS)('refuses an Authorization header of %s: 401, no data', async (_, header) => {
    const value = await header();
    expectUnauthenticated(await server.gql(readQuery, {}, { authorization: value }), value);
    expectUnauthenticated(await server.gql(writeQuery, {}, { authorization: value }), value);
  });

  it('changed nothing in the table', async () => {
    expect(await scanTable(server.dynamo.doc, server.tableName)).toEqual(before);
  });

  it('would have written with a valid admin token (the refused write is a real one)', async () => {
    const response = await server.gql(writeQuery, {}, { authorization: `Bearer ${await sign(CLAIMS)}` });
    expect(response.data).toEqual({ createProduct: { product: { productId: 'forged-write' }, userErrors: [] } });
  });
});

describe('requests without a token', () => {
  it('read the public catalog, and see no viewer', async () => {
    const response = await server.gql(readQuery, {}, { authorization: '' });
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ product: { name: 'Two-Person Tent' }, viewer: null });
  });

  it('get UNAUTHENTICATED on the fields that need a viewer, and only there', async () => {
    const response = await server.gql(
      '{ product(productId: "tent-2p") { name } user(userId: "alice") { name } }',
      {},
      { authorization: '' },
    );
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ product: { name: 'Two-Person Tent' }, user: null });
    expect(response.errors?.map((error) => [error.path, error.extensions?.code])).toEqual([
      [['user'], 'UNAUTHENTICATED'],
    ]);
  });
});

describe('a JWKS configuration (an identity provider signing RS256)', () => {
  const issuer = 'https://id.example.test/';
  const audience = 'tablegraph-api';
  let jwks: JwksServer;
  let app: AuthTestServer;
  const user = aUser();

  beforeAll(async () => {
    jwks = await startJwksServer();
    app = await startServerWithAuth({ jwksUrl: jwks.url, issuer, audience });
    await store(app.dynamo.doc, app.tableName, { users: [user] });
  });
  afterAll(async () => {
    await app?.stop();
    await jwks?.stop();
  });

  const rs256 = (claims: JWTPayload, options: TokenOptions = {}) =>
    sign(claims, { key: jwks.privateKey, alg: 'RS256', kid: jwks.kid, issuer, audience, ...options });
  const viewerOf = (token: string) => app.post('{ viewer { userId } }', { authorization: `Bearer ${token}` });

  it("accepts an RS256 token signed with the provider's key, fetched from the JWKS URL", async () => {
    const response = await viewerOf(await rs256({ sub: user.userId, role: 'customer' }));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ data: { viewer: { userId: user.userId } } });
    expect(response.body.errors).toBeUndefined();
    expect(jwks.fetches()).toBeGreaterThanOrEqual(1);
  });

  it("gives the provider's admin the admin's view", async () => {
    const response = await app.post(`{ user(userId: "${user.userId}") { userId } }`, {
      authorization: `Bearer ${await rs256({ sub: 'some-admin', role: 'admin' })}`,
    });
    expect(response.body).toMatchObject({ data: { user: { userId: user.userId } } });
  });

  it.each<[string, () => Promise<string>]>([
    ['from another issuer', () => rs256({ sub: user.userId, role: 'customer' }, { issuer: 'https://evil.example/' })],
    ['for another audience', () => rs256({ sub: user.userId, role: 'customer' }, { audience: 'tablegraph' })],
    ['that expired', () => rs256({ sub: user.userId, role: 'customer' }, { exp: now() - 3600 })],
    [
      'signed HS256 with the local development secret',
      () => sign({ sub: user.userId, role: 'customer' }, { issuer, audience }),
    ],
    [
      "signed HS256 with the provider's public key as the secret (algorithm confusion)",
      async () =>
        sign(
          { sub: user.userId, role: 'admin' },
          { key: new TextEncoder().encode(await exportSPKI(jwks.publicKey)), kid: jwks.kid, issuer, audience },
        ),
    ],
    ['with alg none', async () => unsigned({ sub: user.userId, role: 'admin' }, issuer, audience)],
    [
      "signed by another RS256 key under the provider's kid",
      async () => {
        const impostor = await startJwksServer();
        await impostor.stop();
        return rs256({ sub: user.userId, role: 'admin' }, { key: impostor.privateKey });
      },
    ],
  ])('refuses a token %s with 401 UNAUTHENTICATED', async (_, token) => {
    const response = await viewerOf(await token());
    expect(response.status).toBe(401);
    expect(response.body).not.toHaveProperty('data');
    expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
  });
});
