/**
 * GraphQL over HTTP is one handler (src/pipeline/http/graphqlHttp.ts) behind two adapters: the
 * node:http server and the Lambda. The same raw request (method, query string, headers, body
 * bytes) gets the same answer from both: encoded bodies under the one body limit, document ids,
 * CSRF prevention, request ids, and the ETag and 304 of public answers.
 */
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, loadGraphQLLambdaConfig } from '../src/config/index.js';
import { createGraphQLHandler } from '../src/lambda/graphql.js';
import type { GraphQLLambdaHandler } from '../src/lambda/graphql.js';
import { loadPersistedDocuments } from '../src/pipeline/documents/persistedDocuments.js';
import { aProduct, store } from './support/factories.js';
import { endpoint, startTestServer, TEST_AUTH, TEST_CURSOR_SECRET } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { apiGatewayEvent } from './support/transports.js';

const BODY_LIMIT = 4096;
const categoryHash = [...loadPersistedDocuments()].find(([, text]) => text.startsWith('query CategoryPage'))?.[0];

interface RawRequest {
  method: 'GET' | 'POST';
  search?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}
type Send = (request: RawRequest) => Promise<RawAnswer>;

let server: TestServer;
let lambda: GraphQLLambdaHandler;
beforeAll(async () => {
  server = await startTestServer({
    playground: false,
    cacheMaxAgeSeconds: 60,
    limits: { ...DEFAULT_LIMITS, maxBodyBytes: BODY_LIMIT },
  });
  await store(server.dynamo.doc, server.tableName, { products: [aProduct({ category: 'outdoor', name: 'Tent' })] });
  lambda = createGraphQLHandler(
    loadGraphQLLambdaConfig({
      NODE_ENV: 'test',
      DYNAMODB_ENDPOINT: endpoint(),
      TABLE_NAME: server.tableName,
      CURSOR_SECRET: TEST_CURSOR_SECRET,
      JWT_SECRET: TEST_AUTH.secret,
      LOG_LEVEL: 'silent',
      STREAM_CONSUMER: 'false',
      CACHE_MAX_AGE: '60',
      MAX_BODY_BYTES: String(BODY_LIMIT),
    }),
  );
});
afterAll(() => server.stop());

const overHttp: Send = async ({ method, search = '', headers = {}, body }) => {
  const response = await fetch(`${server.url}${search}`, { method, headers, body });
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
};

const overLambda: Send = async ({ method, search = '', headers = {}, body }) => {
  const base = apiGatewayEvent('', {});
  const binary = Buffer.isBuffer(body);
  const event: APIGatewayProxyEventV2 = {
    ...base,
    routeKey: `${method} /graphql`,
    rawQueryString: search.replace(/^\?/, ''),
    // As API Gateway (payload v2) delivers them: cookies apart from the headers.
    headers: Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'cookie')),
    ...(headers.cookie === undefined ? {} : { cookies: headers.cookie.split('; ') }),
    requestContext: { ...base.requestContext, http: { ...base.requestContext.http, method } },
    body: body === undefined ? undefined : binary ? body.toString('base64') : body,
    isBase64Encoded: binary,
  };
  const result = await lambda(event, {} as Context);
  const lower = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  return { status: result.statusCode ?? 200, headers: lower, body: result.body ?? '' };
};

const json = { 'content-type': 'application/json' };
const codeOf = (answer: RawAnswer): unknown => JSON.parse(answer.body).errors?.[0]?.extensions?.code;

describe.each([
  ['node:http', () => overHttp],
  ['Lambda', () => overLambda],
] as const)('GraphQL over HTTP through %s', (_name, transport) => {
  let send: Send;
  beforeAll(() => {
    send = transport();
  });

  it('reads a gzip-encoded body', async () => {
    const body = gzipSync(JSON.stringify({ query: '{ __typename }' }));
    const answer = await send({ method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ data: { __typename: 'Query' } });
  });

  it('counts the body limit in decoded bytes: a small gzip body that inflates past it is 413', async () => {
    const body = gzipSync(JSON.stringify({ query: `{ __typename }${' '.repeat(BODY_LIMIT * 4)}` }));
    expect(body.length).toBeLessThan(BODY_LIMIT);
    const answer = await send({ method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body });
    expect(answer.status).toBe(413);
    expect(codeOf(answer)).toBe('PAYLOAD_TOO_LARGE');
    expect(answer.headers['cache-control']).toBe('private, no-store');
  });

  it('refuses a Content-Encoding it cannot read with 415', async () => {
    const answer = await send({
      method: 'POST',
      headers: { ...json, 'content-encoding': 'compress' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(answer.status).toBe(415);
  });

  it('refuses JSON that is not an object or a list, and a charset other than UTF-8', async () => {
    expect((await send({ method: 'POST', headers: json, body: '"{ __typename }"' })).status).toBe(400);
    const latin1 = await send({
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=latin1' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(latin1.status).toBe(415);
  });

  it('echoes a sane x-request-id, and replaces one that is not', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    const kept = await send({ method: 'POST', headers: { ...json, 'x-request-id': 'trace-42' }, body });
    expect(kept.headers['x-request-id']).toBe('trace-42');
    const replaced = await send({ method: 'POST', headers: { ...json, 'x-request-id': 'no spaces allowed' }, body });
    expect(replaced.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    expect(replaced.headers['x-request-id']).not.toBe('no spaces allowed');
  });

  const getOf = (query: string) => `?${new URLSearchParams({ query }).toString()}`;

  it('runs a GET query without a preflight header when it carries no cookies (urql by default)', async () => {
    const answer = await send({ method: 'GET', search: getOf('{ __typename }') });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ data: { __typename: 'Query' } });
  });

  it('refuses, as a possible CSRF, a GET query that carries cookies without a preflight header', async () => {
    const answer = await send({ method: 'GET', search: getOf('{ __typename }'), headers: { cookie: 'session=1' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatch(/Cross-Site Request Forgery/);
    const preflighted = await send({
      method: 'GET',
      search: getOf('{ __typename }'),
      headers: { cookie: 'session=1', 'apollo-require-preflight': 'true' },
    });
    expect(preflighted.status).toBe(200);
  });

  it('refuses a GET of a mutation or a subscription without a preflight header, before running it', async () => {
    const mutation = await send({
      method: 'GET',
      search: getOf(
        'mutation { createUser(input: { userId: "csrf", email: "csrf@example.com", name: "C" }) { user { userId } } }',
      ),
    });
    expect(mutation.status).toBe(400);
    expect(mutation.body).toMatch(/Cross-Site Request Forgery/);
    const subscription = await send({ method: 'GET', search: getOf('subscription { orderEvents { type } } ') });
    expect(subscription.status).toBe(400);
    expect(subscription.body).toMatch(/Cross-Site Request Forgery/);
    const check = await server.gql('{ user(userId: "csrf") { userId } }');
    expect(check.data?.user).toBeNull();
  });

  it('refuses a simple text/plain POST as a possible CSRF', async () => {
    const answer = await send({
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatch(/Cross-Site Request Forgery/);
  });

  it('runs a trusted query by documentId, and gives its public answer an ETag and a 304', async () => {
    const search = `?${new URLSearchParams({
      documentId: `sha256:${categoryHash}`,
      variables: JSON.stringify({ category: 'outdoor' }),
    }).toString()}`;
    const first = await send({ method: 'GET', search });
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('public, max-age=60');
    expect(JSON.parse(first.body).data.products.nodes.map((node: any) => node.name)).toEqual(['Tent']);
    const etag = first.headers.etag;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    // As a browser revalidates (fetch alone would add `cache-control: no-cache`, asking for a full answer).
    const again = await send({
      method: 'GET',
      search,
      headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' },
    });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    const reload = await send({
      method: 'GET',
      search,
      headers: { 'if-none-match': etag!, 'cache-control': 'no-cache' },
    });
    expect(reload.status).toBe(200);
  });
});
