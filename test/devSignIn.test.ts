/**
 * The development sign-in (POST /auth/dev/token, DEV_SIGN_IN): a demo user gets a token the API
 * accepts, renews it with the token itself, and nothing else gets one; without DEV_SIGN_IN the
 * route does not exist. Browsers on an allowed origin may call it (CORS).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../src/auth/tokens.js';
import { DEV_SIGN_IN_MAX_BODY_BYTES, DEV_SIGN_IN_PATH } from '../src/transports/http/devSignIn.js';
import { aUser, store } from './support/factories.js';
import { startTestServer, TEST_AUTH, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

const alice = aUser({ userId: 'alice' });
const SHOP = 'https://shop.example.com';

let server: TestServer;
let off: TestServer;
let endpoint: string;
beforeAll(async () => {
  [server, off] = await Promise.all([
    startTestServer({
      devSignIn: { users: ['alice', 'bob'], auth: TEST_AUTH, tokenSeconds: 600 },
      cors: { origins: [SHOP], allowLocalhost: false },
    }),
    startTestServer(),
  ]);
  await store(server.dynamo.doc, server.tableName, { users: [alice] });
  endpoint = new URL(DEV_SIGN_IN_PATH, server.url).toString();
});
afterAll(() => Promise.all([server?.stop(), off?.stop()]));

const post = (body: string | undefined, headers: Record<string, string> = {}, url = endpoint) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

const claims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
    sub: string;
    exp: number;
    iat: number;
  };

const viewerOf = async (token: string) =>
  (
    await server.gql<{ viewer: { userId: string } | null }>(
      '{ viewer { userId } }',
      {},
      { authorization: `Bearer ${token}` },
    )
  ).data?.viewer;

describe('the development sign-in', () => {
  it('gives a demo user a customer token the API accepts, shaped as an OAuth token response', async () => {
    const response = await post(JSON.stringify({ userId: 'alice' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as { access_token: string; token_type: string; expires_in: number };
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 600 });
    const { sub, exp, iat } = claims(body.access_token);
    expect({ sub, lifetime: exp - iat }).toEqual({ sub: 'alice', lifetime: 600 });
    expect(await viewerOf(body.access_token)).toEqual({ userId: 'alice' });
  });

  it('renews a token it accepts, for the same user', async () => {
    const first = await tokenFor('alice');
    const response = await post('', { authorization: `Bearer ${first}` });
    expect(response.status).toBe(200);
    const { access_token: renewed } = (await response.json()) as { access_token: string };
    expect(claims(renewed).sub).toBe('alice');
    expect(await viewerOf(renewed)).toEqual({ userId: 'alice' });
  });

  it.each([
    ['a user who is not a demo user', JSON.stringify({ userId: 'mallory' }), {}, 'invalid_grant'],
    ['an admin', JSON.stringify({ userId: 'test-admin' }), {}, 'invalid_grant'],
    ['a body that is not JSON', '{userId', {}, 'invalid_request'],
    ['a body that is not an object', '["alice"]', {}, 'invalid_request'],
    ['nothing to go by', '{}', {}, 'invalid_request'],
    ['a renewal with a token the API refuses', '', { authorization: 'Bearer not.a.token' }, 'invalid_grant'],
  ])('refuses %s with 400 and an OAuth error', async (_case, body, headers, error) => {
    const response = await post(body, headers);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error, error_description: expect.any(String) });
  });

  it('refuses a renewal of an expired token, naming why', async () => {
    const expired = await signToken(
      { userId: 'alice', role: 'customer' },
      TEST_AUTH,
      Math.floor(Date.now() / 1000) - 60,
    );
    const response = await post('', { authorization: `Bearer ${expired}` });
    expect(await response.json()).toEqual({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/expired/),
    });
  });

  it('reads no more than its body bound', async () => {
    const response = await post(JSON.stringify({ userId: 'a'.repeat(DEV_SIGN_IN_MAX_BODY_BYTES) }));
    expect(response.status).toBe(413);
  });

  it('answers only POST', async () => {
    const response = await fetch(endpoint);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('lets a page of an allowed origin call it', async () => {
    const preflight = await fetch(endpoint, {
      method: 'OPTIONS',
      headers: {
        origin: SHOP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(SHOP);
    const response = await post(JSON.stringify({ userId: 'bob' }), { origin: SHOP });
    expect(response.headers.get('access-control-allow-origin')).toBe(SHOP);
  });

  it('does not exist without DEV_SIGN_IN', async () => {
    const response = await post(JSON.stringify({ userId: 'alice' }), {}, new URL(DEV_SIGN_IN_PATH, off.url).toString());
    expect(response.status).toBe(404);
  });
});
