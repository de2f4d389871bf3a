/**
 * The review declarations on their own: keys that sort the product page's way, one id per
 * author and product, the tags a review write changes against those a product page reads, the
 * rating's updates, and a review's change event on the wire.
 */
import { describe, expect, it } from 'vitest';
import type { ChangeEventOf } from '../../src/events/changeEvent.js';
import { decodeEvent, encodeEvent, EVENT_LIMITS } from '../../src/events/eventSchema.js';

/** The table whose bus carries the events here. */
const TABLE = 'shop';
import { productPageParams, productReviewsQuery } from '../../src/db/productPage.js';
import { tagsOfChange, tagsOfWrite } from '../../src/table/dependencies.js';
import { PRODUCT } from '../../src/table/entities/product.js';
import { PRODUCT_REVIEWS, REVIEW_SK, STARS_SK } from '../../src/table/entities/ranges.js';
import { matchKey } from '../../src/table/entities/registry.js';
import {
  PRODUCT_RATING,
  PRODUCT_REVIEW,
  REVIEW,
  REVIEW_EVENTS,
  REVIEW_LIMITS,
  reviewIdOf,
} from '../../src/table/entities/review.js';
import type { ReviewModel } from '../../src/table/models.js';
import { ratingChange } from '../../src/writes/reviews.js';

const aReview = (overrides: Partial<ReviewModel> = {}): ReviewModel => ({
  kind: 'Review',
  reviewId: reviewIdOf('tent-2p', 'alice'),
  productId: 'tent-2p',
  authorId: 'alice',
  rating: 4,
  title: 'Light',
  body: 'Pitches in minutes.',
  authorName: 'Alice Example',
  verifiedPurchase: true,
  createdAt: '2026-06-01T12:00:00.000Z',
  updatedAt: '2026-06-01T12:00:00.000Z',
  version: 1,
  ...overrides,
});

/** A stream image (AttributeValue strings) of `item`'s string attributes. */
const image = (item: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(item)
      .filter(([, value]) => typeof value === 'string')
      .map(([name, value]) => [name, { S: value }]),
  );

describe('the keys of a product page', () => {
  it('sort the product, its rating and its reviews, newest first, in one ascending range', () => {
    const older = PRODUCT_REVIEW.codec.toItem(aReview({ createdAt: '2026-01-01T00:00:00.000Z', reviewId: 'r-old' }));
    const newer = PRODUCT_REVIEW.codec.toItem(aReview({ createdAt: '2026-06-01T00:00:00.001Z', reviewId: 'r-new' }));
    const keys = [older.SK, 'RATING', 'SOLD#o-1', newer.SK, 'DETAILS', 'BUYER#alice'].map(String).sort();
    expect(keys).toEqual(['BUYER#alice', 'DETAILS', 'RATING', newer.SK, older.SK, 'SOLD#o-1']);
    const { ExpressionAttributeValues: bounds } = productPageParams('t', 'tent-2p', 20);
    const inRange = keys.filter((sk) => sk >= String(bounds?.[':product']) && sk <= String(bounds?.[':reviewsEnd']));
    expect(inRange).toEqual(['DETAILS', 'RATING', newer.SK, older.SK]);
  });

  it('order by stars through LSI1, newest first among equals when read down', () => {
    const keys = [
      aReview({ rating: 5, createdAt: '2026-01-01T00:00:00.000Z' }),
      aReview({ rating: 1, createdAt: '2026-06-01T00:00:00.000Z' }),
      aReview({ rating: 5, createdAt: '2026-03-01T00:00:00.000Z' }),
    ].map((review) => STARS_SK.build(review));
    expect([...keys].sort().reverse()).toEqual([keys[2], keys[0], keys[1]]);
    expect(productReviewsQuery('t', 'p', 'HIGHEST_RATING')).toMatchObject({ indexName: 'LSI1', ascending: false });
    expect(productReviewsQuery('t', 'p', 'NEWEST')).toMatchObject({ ascending: true, keyAttributes: ['PK', 'SK'] });
  });

  it('parse back as the kinds that built them', () => {
    const review = aReview();
    for (const entity of [REVIEW, PRODUCT_REVIEW, PRODUCT_RATING]) {
      const item =
        entity === PRODUCT_RATING
          ? { ...PRODUCT_RATING.keyOf({ productId: 'tent-2p' }) }
          : entity.codec.toItem(review as never);
      const match = matchKey({ PK: String(item.PK), SK: String(item.SK) });
      expect(match?.kind === 'item' && match.entity).toBe(entity);
    }
    expect(REVIEW_SK.parse(String(PRODUCT_REVIEW.codec.toItem(review).SK))).toMatchObject({
      reviewId: review.reviewId,
    });
  });

  it('give one review id per author and product', () => {
    expect(reviewIdOf('tent-2p', 'alice')).toBe(reviewIdOf('tent-2p', 'alice'));
    expect(
      new Set([reviewIdOf('tent-2p', 'alice'), reviewIdOf('tent-2p', 'bob'), reviewIdOf('tent-2', 'palice')]).size,
    ).toBe(3);
    expect(reviewIdOf('tent-2p', 'alice')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('the tags of a review write', () => {
  const review = aReview();
  const read = [...PRODUCT.tagsOf({ productId: review.productId }), ...PRODUCT_REVIEWS.tagsOf(review)];

  it('name what a product page with its rating and reviews read, whoever writes', () => {
    expect(read).toEqual(['product:tent-2p', 'reviews:tent-2p']);
    const touched = [REVIEW.keyOf(review), PRODUCT_REVIEW.keyOf(review), PRODUCT_RATING.keyOf(review)];
    // Through the API: the writing instance evicts the tags of the keys it touched.
    expect(touched.flatMap(tagsOfWrite)).toEqual(
      expect.arrayContaining(['reviews:tent-2p', `review:${review.reviewId}`]),
    );
    // With the SDK: the stream record of the copy alone names the page.
    const sdk = tagsOfChange({ NewImage: image(PRODUCT_REVIEW.codec.toItem(review)) });
    expect(sdk).toEqual(expect.arrayContaining(['reviews:tent-2p']));
    // A product's own write does not evict its reviews' pages, nor a review the product.
    expect(tagsOfWrite(PRODUCT.keyOf({ productId: review.productId }))).not.toContain('reviews:tent-2p');
    expect(sdk).not.toContain('product:tent-2p');
  });
});

describe('the rating updates', () => {
  it('add, move between stars and take away, in one UpdateItem each', () => {
    const add = ratingChange('t', 'p', 1, new Map([[4, 1]])).Update;
    expect(add?.UpdateExpression).toBe(
      'SET entityType = :type, productId = :productId ADD reviewCount :count, ratingSum :sum, stars4 :stars4',
    );
    expect(add?.ExpressionAttributeValues).toMatchObject({ ':count': 1, ':sum': 4, ':stars4': 1 });
    const edit = ratingChange(
      't',
      'p',
      0,
      new Map([
        [2, -1],
        [5, 1],
      ]),
    ).Update;
    expect(edit?.ExpressionAttributeValues).toMatchObject({ ':count': 0, ':sum': 3, ':stars2': -1, ':stars5': 1 });
    const remove = ratingChange('t', 'p', -1, new Map([[5, -1]])).Update;
    expect(remove?.ExpressionAttributeValues).toMatchObject({ ':count': -1, ':sum': -5, ':stars5': -1 });
  });
});

describe("a review's change event on the bus", () => {
  const anEvent = (review = aReview()): ChangeEventOf<'Review'> => ({
    entity: 'Review',
    type: 'REVIEW_ADDED',
    seq: '4000000000000000000002',
    at: '2026-06-01T12:00:00.000Z',
    node: review,
    previous: null,
    topics: REVIEW_EVENTS.topicsOf(review),
  });

  it('comes back as it was sent, published on its product’s topic', () => {
    expect(anEvent().topics).toEqual(['product-reviews:tent-2p']);
    expect(decodeEvent(encodeEvent(anEvent(), TABLE), TABLE)).toEqual({ ok: true, event: anEvent() });
  });

  it('fits the largest review a write can store, and refuses more', () => {
    const largest = aReview({
      title: '😀'.repeat(REVIEW_LIMITS.titleLength / 2),
      body: '😀'.repeat(REVIEW_LIMITS.bodyLength / 2),
    });
    expect(Buffer.byteLength(encodeEvent(anEvent(largest), TABLE))).toBeLessThan(EVENT_LIMITS.bytes);
    const body = JSON.parse(encodeEvent(anEvent(), TABLE)) as Record<string, any>;
    for (const [change, reason] of [
      [(m: Record<string, any>) => (m.node.body = 'x'.repeat(REVIEW_LIMITS.bodyLength + 1)), 'review.body is invalid'],
      [(m: Record<string, any>) => (m.node.rating = 6), 'review.rating is invalid'],
      [(m: Record<string, any>) => (m.type = 'ORDER_PLACED'), 'event.type is invalid'],
    ] as const) {
      const tampered = structuredClone(body);
      change(tampered);
      expect(decodeEvent(JSON.stringify(tampered), TABLE)).toEqual({ ok: false, reason });
    }
  });
});
