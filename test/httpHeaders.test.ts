/**
 * HTTP headers a browser, a CDN or a proxy relies on: CORS for allowed origins only (and the
 * same list for WebSocket upgrades), Cache-Control + ETag + 304 for anonymous persisted GETs of
 * public data and `private, no-store` for everything else, gzip/br compression over 1 kB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadPersistedDocuments } from '../src/pipeline/documents/persistedDocuments.js';
import { CategoryPageDocument } from '../client/generated/graphql.js';
import { aProduct, store } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

const SHOP = 'https://shop.example.com';
const documents = loadPersistedDocuments();
const hashOf = (operation: string) => {
  const entry = [...documents].find(([, document]) => document.includes(`query ${operation}(`));
  if (!entry) throw new Error(`no persisted document ${operation}`);
  return entry[0];
};

let server: TestServer;
let development: TestServer;
beforeAll(async () => {
  [server, development] = await Promise.all([
    startTestServer({ cors: { origins: [SHOP], allowLocalhost: false }, cacheMaxAgeSeconds: 60 }),
    startTestServer({ cors: { origins: [], allowLocalhost: true } }),
  ]);
  await store(server.dynamo.doc, server.tableName, { products: [aProduct({ category: 'outdoor', name: 'Tent' })] });
});
afterAll(() => Promise.all([server.stop(), development.stop()]));

const preflight = (url: string, origin: string) =>
  fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers':
        'content-type, authorization, apollo-require-preflight, x-apollo-operation-name',
    },
  });

describe('CORS', () => {
  it('answers a preflight from an allowed origin with the request headers clients send', async () => {
    const response = await preflight(server.url, SHOP);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(response.headers.get('access-control-allow-headers')?.split(',')).toEqual([
      'content-type',
      'authorization',
      'apollo-require-preflight',
      'x-apollo-operation-name',
      'x-request-id',
      'last-event-id',
    ]);
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it.each([['https://evil.example.com'], ['http://localhost:5173'], [`${SHOP}.evil.com`]])(
    'gives %s no CORS headers',
    async (origin) => {
      const response = await preflight(server.url, origin);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      const post = await fetch(server.url, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(post.headers.get('access-control-allow-origin')).toBeNull();
    },
  );

  it('allows http://localhost on any port in development, and nothing else', async () => {
    const local = await preflight(development.url, 'http://localhost:5173');
    expect(local.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect((await preflight(development.url, SHOP)).headers.get('access-control-allow-origin')).toBeNull();
  });

  const upgrade = (url: string, origin: string | undefined) =>
    new Promise<number>((resolve) => {
      const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws', origin ? { origin } : {});
      socket.once('open', () => {
        socket.close();
        resolve(101);
      });
      socket.on('error', () => undefined);
      socket.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        socket.terminate();
      });
    });

  it.each([
    [SHOP, 101],
    ['https://evil.example.com', 403],
    [undefined, 101],
  ])('WebSocket upgrade from origin %s answers %i when CORS_ORIGINS is set', async (origin, status) => {
    expect(await upgrade(server.url, origin)).toBe(status);
  });

  it('accepts a WebSocket upgrade from its own origin, and from anywhere when no list is set', async () => {
    expect(await upgrade(server.url, new URL(server.url).origin)).toBe(101);
    expect(await upgrade(development.url, 'https://evil.example.com')).toBe(101);
  });
});

const persistedGet = (url: string, operation: string, variables: object, headers: Record<string, string> = {}) =>
  fetch(
    `${url}?${new URLSearchParams({
      operationName: operation,
      variables: JSON.stringify(variables),
      extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hashOf(operation) } }),
    }).toString()}`,
    { headers: { 'apollo-require-preflight': 'true', ...headers } },
  );

describe('HTTP caching', () => {
  it('lets an anonymous persisted GET of public data be cached, with an ETag and a 304 on If-None-Match', async () => {
    const first = await persistedGet(server.url, 'CategoryPage', { category: 'outdoor' });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(((await first.json()) as any).data.products.nodes.map((node: any) => node.name)).toEqual(['Tent']);

    // As a browser revalidates (fetch would add `cache-control: no-cache`, which asks for a full answer).
    const revalidate = { 'if-none-match': etag!, 'cache-control': 'max-age=0' };
    const again = await persistedGet(server.url, 'CategoryPage', { category: 'outdoor' }, revalidate);
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const other = await persistedGet(server.url, 'CategoryPage', { category: 'kitchen' }, revalidate);
    expect(other.status).toBe(200);
  });

  const textGet = (query: string) =>
    fetch(`${server.url}?${new URLSearchParams({ query }).toString()}`, {
      headers: { 'apollo-require-preflight': 'true' },
    });

  it('decides by what the answer read, not by the document: any public read is public', async () => {
    // Not a manifest document, and hashed by no one: it still read only products.
    const response = await textGet('{ products(category: "outdoor", first: 1) { nodes { name } } }');
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
  });

  it.each([
    ['an anonymous look at the viewer', async () => textGet('{ viewer { name } }')],
    [
      'a signed-in GET',
      async () =>
        persistedGet(
          server.url,
          'CategoryPage',
          { category: 'outdoor' },
          { authorization: `Bearer ${await tokenFor('alice')}` },
        ),
    ],
    ['a GET of private data', async () => persistedGet(server.url, 'UserOrdersPage', { userId: 'alice' })],
    [
      'a POST of public data',
      async () =>
        fetch(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: documents.get(hashOf('CategoryPage')), variables: { category: 'outdoor' } }),
        }),
    ],
    ['a GET that fails', async () => persistedGet(server.url, 'CategoryPage', { category: 'outdoor', first: 1000 })],
    // CSRF prevention refuses a mutation sent as GET without a preflight header.
    [
      'a refusal before the pipeline',
      async () => fetch(`${server.url}?query=${encodeURIComponent('mutation { __typename }')}`),
    ],
    [
      'any answer when CACHE_MAX_AGE is 0',
      async () => persistedGet(development.url, 'CategoryPage', { category: 'outdoor' }),
    ],
  ])('marks %s private, no-store, without an ETag', async (_name, send) => {
    const response = await send();
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    expect(response.headers.get('etag')).toBeNull();
  });
});

describe('the typed test client', () => {
  it('sends a codegen document and reads its typed answer', async () => {
    const response = await server.gql(CategoryPageDocument, { category: 'outdoor', first: 1 }, { authorization: '' });
    expect(response.data?.products.nodes.map((node) => node.name)).toEqual(['Tent']);
  });
});

describe('compression', () => {
  const introspection = (acceptEncoding: string) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': acceptEncoding },
      body: JSON.stringify({ query: '{ __schema { types { name description fields { name description } } } }' }),
    });

  it.each([['gzip'], ['br']])('sends a large answer %s-encoded', async (encoding) => {
    const response = await introspection(encoding);
    expect(response.headers.get('content-encoding')).toBe(encoding);
    expect(response.headers.get('vary')).toMatch(/accept-encoding/i);
    expect(((await response.json()) as any).data.__schema.types.length).toBeGreaterThan(20);
  });

  it('sends a large answer unencoded to a client that asks for none', async () => {
    const response = await introspection('identity');
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(1024);
  });

  it('sends an answer under 1 kB unencoded', async () => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip, br' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(((await response.json()) as any).data).toEqual({ __typename: 'Query' });
  });
});
