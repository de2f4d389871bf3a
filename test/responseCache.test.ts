/**
 * The response cache through the HTTP API, on DynamoDB Local with the in-process stream consumer
 * as its invalidation feed: hits cost no DynamoDB request, whoever writes (a mutation, or the
 * SDK straight to the table) evicts what the write changed, private answers stay with their
 * viewer, errors are never stored, and public answers carry their tags for a CDN.
 */
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Context } from 'aws-lambda';
import { loadGraphQLLambdaConfig } from '../src/config/index.js';
import { toGlobalId } from '../src/graphql/globalId.js';
import { createGraphQLHandler } from '../src/lambda/graphql.js';
import { loadPersistedDocuments } from '../src/pipeline/documents/persistedDocuments.js';
import { PRODUCT_REVIEW, reviewIdOf } from '../src/table/entities/review.js';
import { productKey } from '../src/table/keys.js';
import { aProduct, anOrder, aUser, store } from './support/factories.js';
import { endpoint, startTestServer, TEST_AUTH, TEST_CURSOR_SECRET, tokenFor } from './support/harness.js';
import { apiGatewayEvent } from './support/transports.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';
import { waitUntil } from './support/waitUntil.js';

const CACHE = { maxBytes: 8_000_000, maxAgeSeconds: 300, indexHoldMs: 0, shared: false };

const CATEGORY_PAGE = `query Page($category: String!, $first: Int) {
  products(category: $category, first: $first) { nodes { productId name stock } }
}`;
const USER_ORDERS = `query Orders($userId: ID!) {
  user(userId: $userId) { userId orders(first: 5) { nodes { orderId status } } }
}`;

const books = aProduct({ category: 'books', name: 'Atlas', stock: 5 });
const games = aProduct({ category: 'games', name: 'Chess', stock: 2 });
const alice = aUser();
const bob = aUser();
const aliceOrder = anOrder(alice, [books]);
/** A page whose answer is over the compression threshold (1 kB); cheaper than the others (the shop by price). */
const garden = Array.from({ length: 20 }, (_, i) =>
  aProduct({ category: 'garden', name: `Garden tool number ${i} with a long name`, stock: i, priceCents: 100 + i }),
);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ streams: true, responseCache: CACHE, explainCache: true, cacheMaxAgeSeconds: 60 });
  await store(server.dynamo.doc, server.tableName, {
    users: [alice, bob],
    products: [books, games, ...garden],
    orders: [aliceOrder],
  });
  // Serving starts once the consumer has proven the feed (its first drained round).
  await server.app.consumer?.waitUntilCaughtUp();
});
afterAll(() => server.stop());

/** A POST that accepts gzip, read as the bytes on the wire (fetch would decompress them). */
function rawPost(url: string, body: string): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A request asking for `extensions.cache`. */
async function ask(query: string, variables: object, authorization?: string): Promise<GraphQLResponse<any>> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ query, variables, extensions: { cache: true } }),
  });
  return { status: response.status, ...((await response.json()) as object) } as GraphQLResponse<any>;
}
const cacheOf = (response: GraphQLResponse<any>) => (response.extensions as any)?.cache?.status as string;
const requestsOf = (response: GraphQLResponse<any>) => (response.extensions as any)?.cost?.dynamodb?.requests as number;

/** Asks until the answer satisfies `done` (the stream's eviction arrived), at most `timeoutMs`. */
async function askUntil(
  query: string,
  variables: object,
  done: (r: GraphQLResponse<any>) => boolean,
  timeoutMs = 5000,
) {
  const started = Date.now();
  const response = await waitUntil(
    async () => {
      const response = await ask(query, variables);
      return done(response) && response;
    },
    { timeoutMs, intervalMs: 10, what: 'the eviction' },
  );
  return { response, ms: Date.now() - started };
}

describe('the response cache', () => {
  it('serves a repeated query from the cache without any DynamoDB request', async () => {
    const first = await ask(CATEGORY_PAGE, { category: 'games', first: 3 });
    const second = await ask(CATEGORY_PAGE, { category: 'games', first: 3 });
    expect(cacheOf(first)).toBe('miss');
    expect(requestsOf(first)).toBeGreaterThan(0);
    expect(cacheOf(second)).toBe('hit');
    expect(requestsOf(second)).toBe(0);
    expect(second.data).toEqual(first.data);
  });

  it('shares one entry between variables that differ only in key order, and no more', async () => {
    await ask(CATEGORY_PAGE, { category: 'games', first: 4 });
    expect(cacheOf(await ask(CATEGORY_PAGE, { first: 4, category: 'games' }))).toBe('hit');
    expect(cacheOf(await ask(CATEGORY_PAGE, { first: 2, category: 'games' }))).toBe('miss');
  });

  it('evicts a page when the SDK changes a product it lists, no API involved', async () => {
    await ask(CATEGORY_PAGE, { category: 'books' });
    expect(cacheOf(await ask(CATEGORY_PAGE, { category: 'books' }))).toBe('hit');
    await server.dynamo.doc.send(
      new UpdateCommand({
        TableName: server.tableName,
        Key: productKey(books.productId),
        UpdateExpression: 'SET stock = :s',
        ExpressionAttributeValues: { ':s': 41 },
      }),
    );
    const { response } = await askUntil(
      CATEGORY_PAGE,
      { category: 'books' },
      (r) => r.data?.products.nodes[0].stock === 41,
    );
    expect(cacheOf(response)).toBe('miss');
    expect(cacheOf(await ask(CATEGORY_PAGE, { category: 'books' }))).toBe('hit');
  });

  it('caches the whole shop by price, and evicts it when the SDK changes a product in it', async () => {
    const SHOP = `query Shop { products(orderBy: { field: PRICE, direction: DESC }, first: 10) { nodes { productId stock } } }`;
    await ask(SHOP, {});
    expect(cacheOf(await ask(SHOP, {}))).toBe('hit');
    await server.dynamo.doc.send(
      new UpdateCommand({
        TableName: server.tableName,
        Key: productKey(games.productId),
        UpdateExpression: 'SET stock = :s',
        ExpressionAttributeValues: { ':s': 77 },
      }),
    );
    const stockOf = (r: GraphQLResponse<any>) =>
      (r.data?.products.nodes as { productId: string; stock: number }[]).find((n) => n.productId === games.productId)
        ?.stock;
    await askUntil(SHOP, {}, (r) => stockOf(r) === 77);
  });

  it('lets the writer read its own write at once: a mutation evicts what it touched before it answers', async () => {
    const admin = `Bearer ${await tokenFor('admin', 'admin')}`;
    await ask(CATEGORY_PAGE, { category: 'games' }, admin);
    expect(cacheOf(await ask(CATEGORY_PAGE, { category: 'games' }, admin))).toBe('hit');
    const read = await ask(`query { product(productId: "${games.productId}") { version } }`, {}, admin);
    const updated = await ask(
      `mutation($v: Int!) { updateProduct(input: { productId: "${games.productId}", expectedVersion: $v, stock: 17 }) { userErrors { code } } }`,
      { v: read.data.product.version },
      admin,
    );
    expect(updated.data.updateProduct.userErrors).toEqual([]);
    const after = await ask(CATEGORY_PAGE, { category: 'games' }, admin);
    expect(after.data.products.nodes[0].stock).toBe(17);
  });

  it('caches a product page with its rating and reviews once for everyone, and evicts it for a review written through the API or with the SDK', async () => {
    const PAGE = `query Page($productId: ID!) {
      product(productId: $productId) { rating { count histogram } reviews(first: 5) { totalCount nodes { title } } }
    }`;
    const variables = { productId: games.productId };
    // The earlier tests' writes of this product, evicted by the stream once it reaches them: none pending.
    await server.app.consumer?.waitUntilCaughtUp(10_000);
    await ask(PAGE, variables);
    // Public: another viewer, or none, is served the same entry at no DynamoDB request.
    const hit = await ask(PAGE, variables, `Bearer ${await tokenFor(bob.userId)}`);
    expect([cacheOf(hit), requestsOf(hit)]).toEqual(['hit', 0]);

    const added = await ask(
      `mutation { addReview(input: { productId: "${games.productId}", rating: 5, title: "Through the API", body: "" }) { userErrors { code } } }`,
      {},
      `Bearer ${await tokenFor(alice.userId)}`,
    );
    expect(added.data.addReview.userErrors).toEqual([]);
    // The writer's instance evicted the page before it answered.
    const afterApi = await ask(PAGE, variables);
    expect([cacheOf(afterApi), afterApi.data.product.reviews.totalCount]).toEqual(['miss', 1]);

    const at = new Date().toISOString();
    const imported = {
      kind: 'Review' as const,
      reviewId: reviewIdOf(games.productId, bob.userId),
      productId: games.productId,
      authorId: bob.userId,
      rating: 2,
      title: 'With the SDK',
      body: '',
      authorName: bob.name,
      verifiedPurchase: false,
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
    // The stream evicts the page again when it reaches the same write: cache it once that is done.
    await server.app.consumer?.waitUntilCaughtUp(10_000);
    await ask(PAGE, variables);
    expect(cacheOf(await ask(PAGE, variables))).toBe('hit');
    await server.dynamo.doc.send(
      new PutCommand({ TableName: server.tableName, Item: PRODUCT_REVIEW.codec.toItem(imported) }),
    );
    const { response } = await askUntil(
      PAGE,
      variables,
      (r) => r.data?.product.reviews.nodes[0]?.title === 'With the SDK',
    );
    expect(cacheOf(response)).toBe('miss');
  });

  it("keeps a viewer's answer for that viewer: another viewer, or another role, is never served it", async () => {
    const asAlice = `Bearer ${await tokenFor(alice.userId)}`;
    const asBob = `Bearer ${await tokenFor(bob.userId)}`;
    const asAdminAlice = `Bearer ${await tokenFor(alice.userId, 'admin')}`;
    const mine = await ask(USER_ORDERS, { userId: alice.userId }, asAlice);
    expect(mine.data.user.orders.nodes).toHaveLength(1);
    expect(cacheOf(await ask(USER_ORDERS, { userId: alice.userId }, asAlice))).toBe('hit');
    const bobs = await ask(USER_ORDERS, { userId: alice.userId }, asBob);
    expect(bobs.data?.user ?? null).toBeNull();
    expect(cacheOf(bobs)).not.toBe('hit');
    expect(cacheOf(await ask(USER_ORDERS, { userId: alice.userId }))).not.toBe('hit');
    expect(cacheOf(await ask(USER_ORDERS, { userId: alice.userId }, asAdminAlice))).toBe('miss');
  });

  it('never stores an answer with errors: bad input does not poison the cache', async () => {
    const bad = { category: 'games', first: 1000 };
    const refused = await ask(CATEGORY_PAGE, bad);
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(cacheOf(await ask(CATEGORY_PAGE, bad))).toBe('miss');
    const forged = await ask(CATEGORY_PAGE, { category: 'games#PROFILE' });
    expect(forged.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(cacheOf(await ask(CATEGORY_PAGE, { category: 'games#PROFILE' }))).toBe('miss');
  });

  it("writes a hit's stored answer compressed once: the same bytes and ETag on every hit, kept with the entry", async () => {
    const cache = server.app.cache!;
    const post = () =>
      rawPost(server.url, JSON.stringify({ query: CATEGORY_PAGE, variables: { category: 'garden', first: 20 } }));
    const miss = await post();
    const bytesAfterMiss = cache.bytes;
    const first = await post();
    const bytesAfterFirst = cache.bytes;
    const second = await post();
    for (const answer of [miss, first, second]) expect(answer.headers['content-encoding']).toBe('gzip');
    const answerOf = (body: Buffer) => JSON.parse(gunzipSync(body).toString()) as { data: unknown };
    expect(answerOf(first.body).data).toEqual(answerOf(miss.body).data);
    expect(first.headers.etag).toBe(miss.headers.etag);
    expect(second.headers.etag).toBe(miss.headers.etag);
    // The first hit compressed the stored answer and kept the bytes with its entry; the next one wrote them as they were.
    expect(bytesAfterFirst).toBeGreaterThan(bytesAfterMiss);
    expect(second.body.equals(first.body)).toBe(true);
    expect(cache.bytes).toBe(bytesAfterFirst);
  });

  it('says nothing of the cache unless asked', async () => {
    const response = await server.gql(CATEGORY_PAGE, { category: 'games' });
    expect((response.extensions as Record<string, unknown> | undefined)?.cache).toBeUndefined();
  });
});

describe('the response cache over HTTP for a CDN', () => {
  const documents = loadPersistedDocuments();
  const [hash] = [...documents].find(([, document]) => document.includes('query CategoryPage(')) ?? [];
  const get = (headers: Record<string, string> = {}) =>
    fetch(
      `${server.url}?${new URLSearchParams({
        operationName: 'CategoryPage',
        variables: JSON.stringify({ category: 'games' }),
        extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash } }),
      }).toString()}`,
      { headers: { 'apollo-require-preflight': 'true', ...headers } },
    );

  it('tags a public answer for purging by tag, with the same ETag on the miss and the hits, and a 304', async () => {
    const miss = await get();
    const hit = await get();
    expect(miss.headers.get('cache-control')).toBe('public, max-age=60');
    const tags = miss.headers.get('cache-tag')?.split(',');
    expect(tags).toEqual(expect.arrayContaining(['category:games', `product:${games.productId}`]));
    expect(miss.headers.get('surrogate-key')?.split(' ').sort()).toEqual(tags?.sort());
    expect(hit.headers.get('etag')).toBe(miss.headers.get('etag'));
    // As a browser revalidates (fetch would add `cache-control: no-cache`, which asks for a full answer).
    const revalidated = await get({ 'if-none-match': miss.headers.get('etag') ?? '', 'cache-control': 'max-age=0' });
    expect(revalidated.status).toBe(304);
  });

  it.each(['HTTP', 'Lambda'] as const)(
    'tags every public answer over %s whatever its root field, with one ETag for the miss and the hit',
    async (transport) => {
      const lambdaDynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
      onTestFinished(() => lambdaDynamo.client.destroy());
      const lambda = createGraphQLHandler(
        {
          ...loadGraphQLLambdaConfig({ NODE_ENV: 'test', DYNAMODB_ENDPOINT: endpoint(), TABLE_NAME: server.tableName }),
          logLevel: 'silent',
          cursorSecret: TEST_CURSOR_SECRET,
          auth: TEST_AUTH,
          cacheMaxAgeSeconds: 60,
        },
        { dynamo: lambdaDynamo },
      );
      const getOver = async (query: string, variables: object) => {
        const search = new URLSearchParams({
          query,
          variables: JSON.stringify(variables),
          extensions: JSON.stringify({ cache: true }),
        }).toString();
        const headers = { 'apollo-require-preflight': 'true' };
        if (transport === 'HTTP') {
          const response = await fetch(`${server.url}?${search}`, { headers });
          return { headers: Object.fromEntries(response.headers), body: (await response.json()) as any };
        }
        const event = apiGatewayEvent('', headers);
        event.requestContext.http.method = 'GET';
        event.rawQueryString = search;
        const result = await lambda(event, {} as Context);
        return { headers: (result.headers ?? {}) as Record<string, string>, body: JSON.parse(result.body ?? '') };
      };
      const cases = [
        [
          `query ByNode($id: ID!) { node(id: $id) { ... on Product { name stock } } }`,
          { id: toGlobalId('Product', books.productId) },
        ],
        [
          `query ById($productId: ID!) { product(productId: $productId) { name stock } }`,
          { productId: books.productId },
        ],
      ] as const;
      for (const [query, variables] of cases) {
        const miss = await getOver(query, variables);
        const hit = await getOver(query, variables);
        expect(miss.body.data).toEqual(hit.body.data);
        if (transport === 'HTTP')
          expect([miss.body.extensions.cache.status, hit.body.extensions.cache.status]).toEqual(['miss', 'hit']);
        for (const answer of [miss, hit]) {
          expect(answer.headers['cache-control']).toBe('public, max-age=60');
          expect(answer.headers['cache-tag']?.split(',')).toContain(`product:${books.productId}`);
          expect(answer.headers['surrogate-key']?.split(' ')).toContain(`product:${books.productId}`);
        }
        expect(hit.headers.etag).toMatch(/^W\/"/);
        expect(hit.headers.etag).toBe(miss.headers.etag);
      }
    },
  );

  it('tags no private answer', async () => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await tokenFor(alice.userId)}` },
      body: JSON.stringify({ query: USER_ORDERS, variables: { userId: alice.userId } }),
    });
    expect(response.headers.get('cache-tag')).toBeNull();
    expect(response.headers.get('surrogate-key')).toBeNull();
  });
});
