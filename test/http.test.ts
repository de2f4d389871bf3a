/** GraphQL over HTTP, exercised with plain fetch: methods, media types, status codes, CSRF, APQ. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { loadPersistedDocuments } from '../src/pipeline/documents/persistedDocuments.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';

let server: TestServer;
/** alice's credentials: these tests read her data over plain fetch. */
let auth: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  auth = { authorization: `Bearer ${await tokenFor('alice')}` };
  await putItems(server.dynamo.doc, server.tableName, demoItems());
});
afterAll(() => server.stop());

const JSON_TYPE = 'application/json';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': JSON_TYPE, ...auth, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function get(params: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${server.url}?${new URLSearchParams(params).toString()}`, { headers: { ...auth, ...headers } });
}

describe('POST', () => {
  it('answers a query with 200 and application/json by default', async () => {
    const response = await post({ query: '{ user(userId: "alice") { name } }' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ data: { user: { name: 'Alice Example' } } });
  });

  it('answers with application/graphql-response+json when the client accepts it', async () => {
    const response = await post({ query: '{ user(userId: "alice") { name } }' }, { accept: GRAPHQL_RESPONSE });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
  });

  it.each([
    ['a syntax error', '{ user(userId: "alice") { name }', 'GRAPHQL_PARSE_FAILED'],
    ['an unknown field', '{ user(userId: "alice") { shoeSize } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['a wrong argument type', '{ user(userId: 5.5) { name } }', 'GRAPHQL_VALIDATION_FAILED'],
  ])('refuses %s with 400 and no data', async (_, query, code) => {
    const response = await post({ query }, { accept: GRAPHQL_RESPONSE });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { data?: unknown; errors: { extensions: { code: string } }[] };
    expect(body.data).toBeUndefined();
    expect(body.errors[0]?.extensions.code).toBe(code);
  });

  it('refuses a body that is not JSON with 400', async () => {
    const response = await post('{"query": ');
    expect(response.status).toBe(400);
  });

  it('refuses a body over the size limit with 413', async () => {
    const response = await post({ query: `{ __typename }${' '.repeat(200_000)}` });
    expect(response.status).toBe(413);
  });

  it('refuses a simple text/plain request as a possible CSRF', async () => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/Cross-Site Request Forgery/);
  });
});

describe('GET', () => {
  it('answers a query when the request carries a preflight-forcing header', async () => {
    const response = await get(
      { query: 'query Alice($id: ID!) { user(userId: $id) { name } }', variables: JSON.stringify({ id: 'alice' }) },
      { 'apollo-require-preflight': 'true' },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: { user: { name: 'Alice Example' } } });
  });

  it('refuses a GET with cookies and without such a header as a possible CSRF', async () => {
    const response = await get({ query: '{ __typename }' }, { cookie: 'session=1' });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/Cross-Site Request Forgery/);
  });

  it('never runs a mutation: 405 with Allow: POST, and nothing written', async () => {
    const response = await get(
      {
        query:
          'mutation { createUser(input: { userId: "via-get", email: "via-get@example.com", name: "G" }) { user { userId } } }',
      },
      { 'apollo-require-preflight': 'true' },
    );
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    const check = await server.gql('{ user(userId: "via-get") { userId } }');
    expect(check.data?.user).toBeNull();
  });

  it('serves the playground page to a browser asking for HTML', async () => {
    const response = await fetch(server.url, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain('/playground/assets/playground.js');
  });
});

describe('automatic persisted queries', () => {
  const query = '{ product(productId: "tent-2p") { name } }';
  const extensions = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

  it('asks for the document when it does not know the hash, then remembers it', async () => {
    const hash = sha256(query);
    const unknown = await post({ extensions: extensions(hash) });
    expect(((await unknown.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
    const registered = await post({ query, extensions: extensions(hash) });
    expect(await registered.json()).toMatchObject({ data: { product: { name: 'Two-Person Tent' } } });
    const byHash = await post({ extensions: extensions(hash) });
    expect(await byHash.json()).toMatchObject({ data: { product: { name: 'Two-Person Tent' } } });
  });

  it('refuses a document whose hash does not match', async () => {
    const response = await post({ query, extensions: extensions(sha256('something else')) });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/does not match/);
  });

  it('knows every document of the codegen manifest without registration', async () => {
    const documents = loadPersistedDocuments();
    expect(documents.size).toBeGreaterThanOrEqual(3);
    const [hash, document] = [...documents].find(([, text]) => text.startsWith('query CategoryPage')) ?? [];
    expect(sha256(document ?? '')).toBe(hash);
    const response = await post({ variables: { category: 'books', first: 2 }, extensions: extensions(hash ?? '') });
    const body = (await response.json()) as { data: { products: { nodes: unknown[] } } };
    expect(body.data.products.nodes).toHaveLength(2);
  });
});
