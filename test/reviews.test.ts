/**
 * Product reviews through the API, against DynamoDB Local with the stream consumer running:
 * who may write what, the input rules, the product page's reads (one Query newest first, an
 * index by stars), the rating as an exact recount under concurrent writes and injected
 * transaction conflicts, verifiedPurchase from the buyer records the stream keeps, node(id),
 * and reviewAdded over WebSocket and Server-Sent Events.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  AddReviewDocument,
  DeleteReviewDocument,
  ProductPageDocument,
  UpdateReviewDocument,
  WatchReviewsDocument,
} from '../client/generated/graphql.js';
import { toGlobalId } from '../src/graphql/globalId.js';
import { PRODUCT_REVIEW, REVIEW, reviewIdOf } from '../src/table/entities/review.js';
import { productKey, STREAM_CHECKPOINT_PK } from '../src/table/keys.js';
import type { ProductModel, UserModel } from '../src/table/models.js';
import { aProduct, aUser, store } from './support/factories.js';
import { injectTransactionConflicts } from './support/faults.js';
import type { ConflictInjection } from './support/faults.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { putItems } from '../src/db/batchWrite.js';
import { CANCEL_ORDER, PLACE_ORDER, scanTable } from './support/writes.js';

const injection: ConflictInjection = { conflictsLeft: 0, conflictingAction: 0, sent: [], beforeSend: undefined };
let server: TestServer;
const tokens = new Map<string, string>();

beforeAll(async () => {
  server = await startTestServer({ streams: true, configureClient: injectTransactionConflicts(injection) });
});
afterAll(() => server.stop());
beforeEach(() => {
  injection.conflictsLeft = 0;
  injection.conflictingAction = 0;
});

/** `user`'s bearer token (a customer's). */
async function as(user: UserModel | string): Promise<Record<string, string>> {
  const userId = typeof user === 'string' ? user : user.userId;
  let token = tokens.get(userId);
  if (!token) tokens.set(userId, (token = await tokenFor(userId)));
  return { authorization: `Bearer ${token}` };
}

/** A product and `count` customers with profiles, stored directly. */
async function arrange(count: number) {
  const product = aProduct({ stock: 1000 });
  const users = Array.from({ length: count }, () => aUser());
  await store(server.dynamo.doc, server.tableName, { users, products: [product] });
  return { product, users };
}

const add = async (
  user: UserModel | string,
  input: { productId: string; rating: number; title?: string; body?: string },
) =>
  (await server.gql(AddReviewDocument, { input: { title: 'A title', body: 'A body.', ...input } }, await as(user))).data
    ?.addReview;

const page = (
  productId: string,
  variables: { reviews?: number; after?: string; orderBy?: 'NEWEST' | 'HIGHEST_RATING' | 'LOWEST_RATING' } = {},
) => server.gql(ProductPageDocument, { productId, ...variables }, { authorization: '' });

/**
 * The table without the stream consumer's own items, once the consumer has caught up: what a
 * write that changes nothing must leave as it was.
 */
async function snapshot() {
  await server.app.consumer?.waitUntilCaughtUp(10_000);
  return (await scanTable(server.dynamo.doc, server.tableName)).filter((item) => item.PK !== STREAM_CHECKPOINT_PK);
}

/** The rating as counted from the reviews' copies in the product's partition (what `rating` must equal). */
async function recount(product: ProductModel) {
  const result = await server.dynamo.doc.send(
    new QueryCommand({
      TableName: server.tableName,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: {
        ':pk': productKey(product.productId).PK,
        ':prefix': PRODUCT_REVIEW.spec.key.SK.prefix,
      },
      ConsistentRead: true,
    }),
  );
  const stars = (result.Items ?? []).map((item) => Number(item.rating));
  const histogram = [1, 2, 3, 4, 5].map((star) => stars.filter((s) => s === star).length);
  const sum = stars.reduce((a, b) => a + b, 0);
  return { count: stars.length, average: stars.length ? sum / stars.length : null, histogram };
}

const ratingOf = async (product: ProductModel) => (await page(product.productId, { reviews: 0 })).data?.product?.rating;

describe('a product page', () => {
  it('reads the product, its rating and its first reviews newest first in one request', async () => {
    const { product, users } = await arrange(3);
    for (const [i, user] of users.entries()) await add(user, { productId: product.productId, rating: i + 3 });
    const response = await page(product.productId, { reviews: 2 });
    expect(response.errors).toBeUndefined();
    expect(response.extensions?.cost?.dynamodb.requests).toBe(1);
    const shown = response.data?.product;
    expect(shown?.rating).toEqual({ count: 3, average: 4, histogram: [0, 0, 1, 1, 1] });
    expect(shown?.reviews.totalCount).toBe(3);
    expect(shown?.reviews.nodes.map((review) => review.rating)).toEqual([5, 4]);
    expect(shown?.reviews.pageInfo.hasNextPage).toBe(true);
    // The cursor of the fused page is the connection's own: the next page reads on from it.
    const next = await page(product.productId, { reviews: 2, after: shown?.reviews.pageInfo.endCursor ?? '' });
    expect(next.data?.product?.reviews.nodes.map((review) => review.rating)).toEqual([3]);
    expect(next.data?.product?.reviews.pageInfo.hasNextPage).toBe(false);
  });

  it('reads a product with no review and no rating item in one request too', async () => {
    const { product } = await arrange(0);
    const response = await page(product.productId);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(1);
    expect(response.data?.product?.rating).toEqual({ count: 0, average: null, histogram: [0, 0, 0, 0, 0] });
    expect(response.data?.product?.reviews).toMatchObject({ totalCount: 0, nodes: [] });
  });

  it('lists by stars through the index, most or fewest first, and binds cursors to the order', async () => {
    const { product, users } = await arrange(5);
    const stars = [2, 5, 1, 5, 3];
    for (const [i, user] of users.entries())
      await add(user, { productId: product.productId, rating: stars[i] as number });
    const highest = await page(product.productId, { orderBy: 'HIGHEST_RATING', reviews: 3 });
    // Among equal stars the newest first: users[3] wrote after users[1].
    expect(highest.data?.product?.reviews.nodes.map((r) => [r.rating, r.authorName])).toEqual([
      [5, users[3]?.name],
      [5, users[1]?.name],
      [3, users[4]?.name],
    ]);
    // The product and the rating in one BatchGetItem beside the index's Query.
    expect(highest.extensions?.cost?.dynamodb.requests).toBe(2);
    const lowest = await page(product.productId, { orderBy: 'LOWEST_RATING' });
    expect(lowest.data?.product?.reviews.nodes.map((r) => r.rating)).toEqual([1, 2, 3, 5, 5]);
    const newestCursor = (await page(product.productId, { reviews: 1 })).data?.product?.reviews.pageInfo.endCursor;
    const foreign = await page(product.productId, { orderBy: 'HIGHEST_RATING', after: newestCursor ?? '' });
    expect(foreign.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('finds a review by node(id), anonymous or not, and its product through it', async () => {
    const { product, users } = await arrange(1);
    const review = await add(users[0] as UserModel, { productId: product.productId, rating: 4 });
    const id = review?.review?.id as string;
    expect(id).toBe(toGlobalId('Review', review?.review?.reviewId as string));
    const found = await server.gql(
      `query ($id: ID!) { node(id: $id) { id ... on Review { rating product { productId } } } }`,
      { id },
      { authorization: '' },
    );
    expect(found.data?.node).toEqual({ id, rating: 4, product: { productId: product.productId } });
  });
  it("gives a user their own review of a product through viewer.review, and no one else's", async () => {
    const { product, users } = await arrange(2);
    const [author, other] = users as [UserModel, UserModel];
    const written = await add(author, { productId: product.productId, rating: 2 });
    const mine = `query ($productId: ID!) { viewer { review(productId: $productId) { reviewId rating version } } }`;
    const own = await server.gql(mine, { productId: product.productId }, await as(author));
    expect(own.data?.viewer).toEqual({ review: { reviewId: written?.review?.reviewId, rating: 2, version: 1 } });
    const theirs = await server.gql(mine, { productId: product.productId }, await as(other));
    expect(theirs.data?.viewer).toEqual({ review: null });
  });
});

describe('addReview', () => {
  it('writes the review, its copy and the rating, and refuses a second review of the same product with REVIEW_EXISTS', async () => {
    const { product, users } = await arrange(1);
    const author = users[0] as UserModel;
    const first = await add(author, { productId: product.productId, rating: 4, title: 'Solid', body: 'Works.' });
    expect(first?.userErrors).toEqual([]);
    expect(first?.review).toMatchObject({
      reviewId: reviewIdOf(product.productId, author.userId),
      rating: 4,
      title: 'Solid',
      authorName: author.name,
      verifiedPurchase: false,
      version: 1,
      product: { rating: { count: 1, average: 4, histogram: [0, 0, 0, 1, 0] } },
    });
    const before = await snapshot();
    const second = await add(author, { productId: product.productId, rating: 1 });
    expect(second).toEqual({
      review: null,
      userErrors: [{ code: 'REVIEW_EXISTS', field: ['productId'], message: expect.any(String) }],
    });
    expect(await snapshot()).toEqual(before);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['no stars', { rating: 0 }, ['rating']],
    ['six stars', { rating: 6 }, ['rating']],
    ['a title of 121 characters', { title: 'x'.repeat(121) }, ['title']],
    ['an empty title', { title: '  ' }, ['title']],
    ['a body of 5,001 characters', { body: 'x'.repeat(5001) }, ['body']],
  ])('refuses %s with INVALID_INPUT on that field, and writes nothing', async (_, change, field) => {
    const { product, users } = await arrange(1);
    const before = await snapshot();
    const result = await add(users[0] as UserModel, { productId: product.productId, rating: 3, ...change });
    expect(result?.userErrors).toEqual([{ code: 'INVALID_INPUT', field, message: expect.any(String) }]);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a product that does not exist, a viewer without a profile, and anonymous callers', async () => {
    const { product, users } = await arrange(1);
    expect((await add(users[0] as UserModel, { productId: 'no-such-product', rating: 3 }))?.userErrors).toEqual([
      { code: 'NOT_FOUND', field: ['productId'], message: 'No product with productId "no-such-product"' },
    ]);
    expect((await add('nobody-profile', { productId: product.productId, rating: 3 }))?.userErrors).toMatchObject([
      { code: 'NOT_FOUND', field: null },
    ]);
    const anonymous = await server.gql(
      AddReviewDocument,
      { input: { productId: product.productId, rating: 3, title: 't', body: '' } },
      { authorization: '' },
    );
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('says verifiedPurchase once the stream has counted an order of the product, and no more once it is cancelled', async () => {
    const { product, users } = await arrange(2);
    const [buyer, other] = users as [UserModel, UserModel];
    const placed = await server.gql(
      PLACE_ORDER,
      {
        input: {
          userId: buyer.userId,
          idempotencyKey: 'review-buy',
          items: [{ productId: product.productId, quantity: 1 }],
        },
      },
      await as(buyer),
    );
    const orderId = placed.data?.placeOrder.order.orderId as string;
    await server.app.consumer?.waitForEvent((event) => event.entity === 'Order' && event.node.orderId === orderId);
    const bought = await add(buyer, { productId: product.productId, rating: 5 });
    expect(bought?.review?.verifiedPurchase).toBe(true);
    expect((await add(other, { productId: product.productId, rating: 5 }))?.review?.verifiedPurchase).toBe(false);

    await server.gql(CANCEL_ORDER, { input: { orderId } }, await as(buyer));
    await server.app.consumer?.waitForEvent(
      (event) => event.entity === 'Order' && event.node.orderId === orderId && event.node.status === 'CANCELLED',
    );
    // Decided again when the review is edited.
    const edited = await server.gql(
      UpdateReviewDocument,
      { input: { reviewId: bought?.review?.reviewId as string, expectedVersion: 1, title: 'Returned it' } },
      await as(buyer),
    );
    expect(edited.data?.updateReview.review?.verifiedPurchase).toBe(false);
  });
});

describe('updateReview and deleteReview', () => {
  it('let the author edit (the rating follows) and refuse a stale version with VERSION_CONFLICT', async () => {
    const { product, users } = await arrange(1);
    const author = users[0] as UserModel;
    const reviewId = (await add(author, { productId: product.productId, rating: 2 }))?.review?.reviewId as string;
    const edited = await server.gql(
      UpdateReviewDocument,
      { input: { reviewId, expectedVersion: 1, rating: 5 } },
      await as(author),
    );
    expect(edited.data?.updateReview).toMatchObject({
      review: { rating: 5, version: 2, product: { rating: { count: 1, average: 5, histogram: [0, 0, 0, 0, 1] } } },
      userErrors: [],
    });
    const stale = await server.gql(
      UpdateReviewDocument,
      { input: { reviewId, expectedVersion: 1, rating: 1 } },
      await as(author),
    );
    expect(stale.data?.updateReview).toEqual({
      review: null,
      userErrors: [{ code: 'VERSION_CONFLICT', field: ['expectedVersion'], message: expect.any(String) }],
    });
    expect(await ratingOf(product)).toEqual(await recount(product));
  });

  it('treat another customer’s review as not found, and let only its author edit it, but an admin delete it', async () => {
    const { product, users } = await arrange(2);
    const [author, other] = users as [UserModel, UserModel];
    const reviewId = (await add(author, { productId: product.productId, rating: 4 }))?.review?.reviewId as string;
    const before = await snapshot();
    const notFound = [{ code: 'NOT_FOUND', field: ['reviewId'], message: `No review with reviewId "${reviewId}"` }];
    for (const headers of [await as(other), {}]) {
      const edit = await server.gql(
        UpdateReviewDocument,
        { input: { reviewId, expectedVersion: 1, rating: 1 } },
        headers,
      );
      expect(edit.data?.updateReview.userErrors).toEqual(notFound);
    }
    const deleteByOther = await server.gql(DeleteReviewDocument, { input: { reviewId } }, await as(other));
    expect(deleteByOther.data?.deleteReview).toEqual({ deletedReviewId: null, userErrors: notFound });
    expect(await snapshot()).toEqual(before);

    // The harness's default token is an admin's.
    const byAdmin = await server.gql(DeleteReviewDocument, { input: { reviewId } });
    expect(byAdmin.data?.deleteReview).toEqual({ deletedReviewId: reviewId, userErrors: [] });
    expect(await ratingOf(product)).toEqual({ count: 0, average: null, histogram: [0, 0, 0, 0, 0] });
    const gone = await server.gql(`query ($id: ID!) { node(id: $id) { id } }`, { id: toGlobalId('Review', reviewId) });
    expect(gone.data?.node).toBeNull();
    // Deleted, it may be written again.
    expect((await add(author, { productId: product.productId, rating: 3 }))?.userErrors).toEqual([]);
  });
});

describe('the rating', () => {
  it('equals a recount after concurrent adds, edits and deletes, with transaction conflicts injected', async () => {
    const { product, users } = await arrange(12);
    const ids = new Map<string, string>();
    for (const user of users.slice(0, 6)) {
      ids.set(user.userId, (await add(user, { productId: product.productId, rating: 3 }))?.review?.reviewId as string);
    }
    // The next 8 transactions sent are cancelled for a conflict: their writes retry.
    injection.conflictsLeft = 8;
    await Promise.all([
      ...users.slice(6).map((user, i) => add(user, { productId: product.productId, rating: (i % 5) + 1 })),
      ...users
        .slice(0, 3)
        .map(async (user, i) =>
          server.gql(
            UpdateReviewDocument,
            { input: { reviewId: ids.get(user.userId) as string, expectedVersion: 1, rating: i + 3 } },
            await as(user),
          ),
        ),
      // Two edits of one review at once: one wins, the other is a VERSION_CONFLICT.
      ...[1, 5].map(async (rating) =>
        server.gql(
          UpdateReviewDocument,
          { input: { reviewId: ids.get(users[3]?.userId as string) as string, expectedVersion: 1, rating } },
          await as(users[3] as UserModel),
        ),
      ),
      ...users
        .slice(4, 6)
        .map(async (user) =>
          server.gql(DeleteReviewDocument, { input: { reviewId: ids.get(user.userId) as string } }, await as(user)),
        ),
      // A delete racing an edit of the same review.
      ...[0].map(async () =>
        server.gql(DeleteReviewDocument, { input: { reviewId: ids.get(users[2]?.userId as string) as string } }),
      ),
    ]);
    expect(injection.conflictsLeft).toBe(0);
    const counted = await recount(product);
    expect(counted.count).toBe(6 + 6 - 3);
    expect(await ratingOf(product)).toEqual(counted);
  });
});

describe('reviewAdded', () => {
  it('reaches an anonymous subscriber over WebSocket and over Server-Sent Events, and refuses a product that does not exist', async () => {
    const { product, users } = await arrange(1);
    const ws = createClient({ url: server.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0 });
    const sse = createSseClient({ url: `${server.url}/stream`, retryAttempts: 0 });
    try {
      await server.app.consumer?.waitUntilCaughtUp(10_000);
      const before = server.app.events.subscriberCount;
      const request = { query: WatchReviewsDocument.toString(), variables: { productId: product.productId } };
      const overWs = ws.iterate<{ reviewAdded: { reviewId: string; rating: number } }>(request);
      const overSse = sse.iterate<{ reviewAdded: { reviewId: string; rating: number } }>(request);
      const firsts = [overWs.next(), overSse.next()];
      await expect.poll(() => server.app.events.subscriberCount, { timeout: 5000 }).toBe(before + 2);
      const added = await add(users[0] as UserModel, { productId: product.productId, rating: 4 });
      for (const first of await Promise.all(firsts)) {
        expect(first.value?.data?.reviewAdded).toMatchObject({ reviewId: added?.review?.reviewId, rating: 4 });
      }
      await Promise.all([overWs.return?.(), overSse.return?.()]);
      const missing = ws.iterate({
        query: WatchReviewsDocument.toString(),
        variables: { productId: 'no-such-product' },
      });
      expect((await missing.next()).value?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    } finally {
      await ws.dispose();
      sse.dispose();
    }
  });
});

describe('a review written straight to the table', () => {
  it('is a review like any other: node(id) finds it and reviewAdded announces it', async () => {
    const { product, users } = await arrange(1);
    const author = users[0] as UserModel;
    const at = new Date().toISOString();
    const review = {
      kind: 'Review' as const,
      reviewId: reviewIdOf(product.productId, author.userId),
      productId: product.productId,
      authorId: author.userId,
      rating: 2,
      title: 'Imported',
      body: '',
      authorName: author.name,
      verifiedPurchase: false,
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
    const heard = server.app.consumer?.waitForEvent(
      (event) => event.entity === 'Review' && event.node.reviewId === review.reviewId,
    );
    await putItems(server.dynamo.doc, server.tableName, [
      REVIEW.codec.toItem(review),
      PRODUCT_REVIEW.codec.toItem(review),
    ]);
    expect((await heard)?.type).toBe('REVIEW_ADDED');
    const found = await server.gql(`query ($id: ID!) { node(id: $id) { ... on Review { title } } }`, {
      id: toGlobalId('Review', review.reviewId),
    });
    expect(found.data?.node).toEqual({ title: 'Imported' });
  });
});
