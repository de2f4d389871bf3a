/**
 * The response cache on three API instances fed by Redis: one standalone consumer reads the
 * stream and publishes the dependency tags of every change (and heartbeats); every instance
 * evicts them. Writes go through the API and straight to the table with the SDK; no read that
 * starts after an instance showed a write may show an older value there. The lags are printed
 * (docs/caching.md); `npm run soak:cache` runs the same check with 1,000 writes.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { PRODUCT_REVIEW } from '../src/table/entities/review.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { aProduct, aUser, store } from './support/factories.js';
import { endpoint, tokenFor } from './support/harness.js';
import { postGraphQL } from './support/load.js';
import { waitUntil } from './support/waitUntil.js';
import { RedisServer } from './support/redisServer.js';
import { bypassAfterUnheardWrite, checkStaleReads, STOCK_QUERY } from './support/staleReads.js';

const children = new ChildServers();
const ADD_REVIEW = `mutation AddReview($input: AddReviewInput!) { addReview(input: $input) { userErrors { code } } }`;
const product = aProduct({ category: 'staleness', stock: 0 });
const reviewer = aUser();
let redis: RedisServer;
let dynamo: Dynamo;
let tableName: string;
let apis: ChildServer[];
let admin: string;

/** `extensions.cache.status` of the stock query on `api`. */
async function cacheStatus(api: ChildServer): Promise<string | undefined> {
  const response = await fetch(api.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: admin },
    body: JSON.stringify({
      query: STOCK_QUERY,
      variables: { productId: product.productId, category: product.category },
      extensions: { cache: true },
    }),
  });
  return ((await response.json()) as { extensions?: { cache?: { status?: string } } }).extensions?.cache?.status;
}

const liveOn = (api: ChildServer) =>
  waitUntil(async () => (await cacheStatus(api)) !== 'bypass', {
    timeoutMs: 15_000,
    intervalMs: 100,
    what: 'a live invalidation feed',
  });

let consumer: ChildServer;
const startConsumer = async () => {
  consumer = await children.startConsumer(endpoint(), tableName, { REDIS_URL: redis.url, STREAM_POLL_MS: '50' });
};

beforeAll(async () => {
  admin = `Bearer ${await tokenFor('cache-admin', 'admin')}`;
  tableName = `cache-scale-${randomUUID()}`;
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  [redis] = await Promise.all([RedisServer.start(), ensureTable(dynamo.client, tableName, endpoint())]);
  await store(dynamo.doc, tableName, { products: [product], users: [reviewer] });
  const apiEnv = { REDIS_URL: redis.url, STREAM_CONSUMER: 'false', NODE_ENV: 'development' };
  await startConsumer();
  apis = await Promise.all([0, 1, 2].map(() => children.start(endpoint(), tableName, apiEnv)));
  // Each instance serves from its cache once the consumer's heartbeats reach it.
  for (const api of apis) await liveOn(api);
}, 120_000);

afterAll(async () => {
  await children.killAll();
  await redis?.kill();
  await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  dynamo?.client.destroy();
});

describe('the response cache on three instances', () => {
  it('serves hits on every instance once warm', async () => {
    for (const api of apis) {
      await postGraphQL(api.url, admin, STOCK_QUERY, { productId: product.productId, category: product.category });
      expect(await cacheStatus(api)).toBe('hit');
    }
  });

  it('evicts every write on every instance, with no stale read after the eviction and none past the feed timeout', async () => {
    const report = await checkStaleReads({
      urls: apis.map((api) => api.url),
      doc: dynamo.doc,
      tableName,
      productId: product.productId,
      category: product.category,
      admin,
      writes: 30,
    });
    console.info(`response cache across 3 instances: ${JSON.stringify(report)}`);
    expect(report.stale).toBe(0);
    expect(report.overdue).toBe(0);
  }, 120_000);

  it('evicts a product page on every instance for a review written through one of them, and for one written with the SDK', async () => {
    const PAGE = `query Page($productId: ID!) { product(productId: $productId) { rating { count } reviews(first: 5) { nodes { title } } } }`;
    const variables = { productId: product.productId };
    const titlesOn = async (api: ChildServer) =>
      (
        (await postGraphQL(api.url, admin, PAGE, variables)).body?.data as {
          product: { reviews: { nodes: { title: string }[] } };
        }
      ).product.reviews.nodes.map((node) => node.title);
    for (const api of apis) await titlesOn(api);
    const added = await postGraphQL(apis[0]?.url as string, `Bearer ${await tokenFor(reviewer.userId)}`, ADD_REVIEW, {
      input: { productId: product.productId, rating: 5, title: 'Through the API', body: '' },
    });
    expect((added.body?.data as { addReview: { userErrors: unknown[] } }).addReview.userErrors).toEqual([]);
    const seenOnEvery = (title: string) =>
      Promise.all(
        apis.map((api) =>
          waitUntil(async () => (await titlesOn(api)).includes(title), {
            timeoutMs: 5000,
            intervalMs: 20,
            what: `${title} on every instance`,
          }),
        ),
      );
    await seenOnEvery('Through the API');
    const at = new Date().toISOString();
    await dynamo.doc.send(
      new PutCommand({
        TableName: tableName,
        Item: PRODUCT_REVIEW.codec.toItem({
          kind: 'Review',
          reviewId: 'imported-review',
          productId: product.productId,
          authorId: 'someone',
          rating: 1,
          title: 'With the SDK',
          body: '',
          authorName: 'Someone',
          verifiedPurchase: false,
          createdAt: at,
          updatedAt: at,
          version: 1,
        }),
      }),
    );
    await seenOnEvery('With the SDK');
  });

  it('bypasses the cache within 10 s once the consumer is gone, and flushes when it is back', async () => {
    const variables = { productId: product.productId, category: product.category };
    await children.kill(consumer);
    const noticed = await bypassAfterUnheardWrite({
      doc: dynamo.doc,
      tableName,
      productId: product.productId,
      stock: 999_999,
      instances: apis,
      status: cacheStatus,
      timeoutMs: 10_000,
      what: 'a bypass after the consumer died',
    });
    console.info(`dead feed noticed after ${noticed.map((ms) => Math.round(ms)).join(', ')} ms`);
    await startConsumer();
    for (const api of apis) {
      await liveOn(api);
      const read = await postGraphQL(api.url, admin, STOCK_QUERY, variables);
      expect((read.body?.data as { product: { stock: number } }).product.stock).toBe(999_999);
    }
  }, 60_000);
});
