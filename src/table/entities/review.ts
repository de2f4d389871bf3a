/**
 * Product reviews. A review has two items, as an order does: its details (`REVIEW#<id>/DETAILS`,
 * what a look-up by id and the mutations read) and a full copy in its product's partition, where
 * the product page reads it. The product's partition then holds, in this key order:
 *
 *   DETAILS (the product)  <  RATING (its rating)  <  REVIEW#<newest first>#<id> (its reviews)
 *
 * so the product, its rating and its newest reviews are one Query of the item collection; the
 * copies also carry LSI1SK (`STARS#<stars>#<createdAt>#<id>`) for the order by stars. The rating
 * is an item of its own, not attributes of the product: it moves in the review writes'
 * transactions, which must not contend with the orders' stock writes on the product item.
 *
 * A review's id is a digest of its product and author: the details put, conditioned on the item
 * not existing, is also the rule of one review per author and product. The buyer records say
 * whether a user bought a product (src/streams/soldCount.ts keeps them with the sale markers),
 * so a review's `verifiedPurchase` is one read.
 */
import { createHash } from 'node:crypto';
import { STARS } from '../models.js';
import type { ProductRatingModel, ReviewModel } from '../models.js';
import { CorruptItemError, int, str } from './attributes.js';
import type { Item } from './attributes.js';
import { defineEntity } from './entity.js';
import { defineEvents, EventFieldError, read } from './events.js';
import { PRODUCT_PK, REVIEW_SK, STARS_SK } from './ranges.js';
import { tagOf, TAGS } from './tags.js';
import { id, key } from './template.js';
import { TOPICS } from './topics.js';

/** The longest title and body a review may have, and the author name an event admits. */
export const REVIEW_LIMITS = { titleLength: 120, bodyLength: 5000, authorNameLength: 100 } as const;

export const REVIEW_PK = key`REVIEW#${id('reviewId')}`;
const DETAILS = key`DETAILS`;
const RATING = key`RATING`;
const BUYER_SK = key`BUYER#${id('userId')}`;

/**
 * The id of `authorId`'s review of `productId`: the same pair always gives the same id, so
 * writing a second review is writing an item that exists. 22 characters of a SHA-256 digest
 * (132 bits): two pairs sharing one is not a concern.
 */
export const reviewIdOf = (productId: string, authorId: string): string =>
  createHash('sha256').update(`${productId}\n${authorId}`).digest('base64url').slice(0, 22);

function reviewAttributes(review: ReviewModel): Item {
  return {
    reviewId: review.reviewId,
    productId: review.productId,
    authorId: review.authorId,
    rating: review.rating,
    title: review.title,
    body: review.body,
    authorName: review.authorName,
    verifiedPurchase: review.verifiedPurchase,
    createdAt: review.createdAt,
    updatedAt: review.updatedAt,
    version: review.version,
  };
}

function stars(item: Item): number {
  const value = int(item, 'rating');
  if (value < 1 || value > 5) throw new CorruptItemError('review rating is not 1 to 5');
  return value;
}

/** Reads either copy of a review. */
function itemToReview(item: Item): ReviewModel {
  if (typeof item.verifiedPurchase !== 'boolean')
    throw new CorruptItemError('review verifiedPurchase is not a boolean');
  return {
    kind: 'Review',
    reviewId: str(item, 'reviewId'),
    productId: str(item, 'productId'),
    authorId: str(item, 'authorId'),
    rating: stars(item),
    title: str(item, 'title'),
    body: str(item, 'body'),
    authorName: str(item, 'authorName'),
    verifiedPurchase: item.verifiedPurchase,
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
    version: int(item, 'version'),
  };
}

export const REVIEW = defineEntity({
  type: 'Review',
  item: 'review',
  holds: 'the review (rating, title, body, author, verifiedPurchase, version)',
  key: { PK: REVIEW_PK, SK: DETAILS },
  visibility: 'public',
  tags: [tagOf(TAGS.review, 'reviewId')],
  node: 'Review',
  codec: {
    toItem: (review: ReviewModel): Item => ({
      PK: REVIEW_PK.build(review),
      SK: DETAILS.build({}),
      entityType: 'Review',
      ...reviewAttributes(review),
    }),
    fromItem: itemToReview,
  },
});

export const PRODUCT_REVIEW = defineEntity({
  type: 'ProductReview',
  item: "review copy in its product's partition",
  holds: 'a full copy of the review',
  key: { PK: PRODUCT_PK, SK: REVIEW_SK },
  indexes: { LSI1SK: STARS_SK },
  visibility: 'public',
  // The copy is the review as the pages show it; its partition (the product's reviews) is a range.
  tags: [tagOf(TAGS.review, 'reviewId')],
  node: 'Review',
  codec: {
    toItem: (review: ReviewModel): Item => ({
      PK: PRODUCT_PK.build(review),
      SK: REVIEW_SK.build(review),
      LSI1SK: STARS_SK.build(review),
      entityType: 'ProductReview',
      ...reviewAttributes(review),
    }),
    fromItem: itemToReview,
  },
});

const starsAttribute = (rating: number): string => `stars${rating}`;

/** The attributes of a product's rating item: its count, the sum of the stars, one counter per star. */
export const RATING_ATTRIBUTES = { count: 'reviewCount', sum: 'ratingSum', stars: starsAttribute } as const;

/**
 * A product's rating: counters moved by each review write in its transaction (+1 and the stars
 * for an add, the difference for an edit, -1 for a delete). Absent until the first review.
 */
export const PRODUCT_RATING = defineEntity({
  type: 'ProductRating',
  item: 'product rating',
  holds: '`reviewCount`, `ratingSum`, `stars1` … `stars5`',
  key: { PK: PRODUCT_PK, SK: RATING },
  visibility: 'public',
  tags: [tagOf(TAGS.reviews, 'productId')],
  codec: {
    toItem: (rating: ProductRatingModel): Item => ({
      PK: PRODUCT_PK.build(rating),
      SK: RATING.build({}),
      entityType: 'ProductRating',
      productId: rating.productId,
      [RATING_ATTRIBUTES.count]: rating.count,
      [RATING_ATTRIBUTES.sum]: rating.sum,
      ...Object.fromEntries(STARS.map((star) => [starsAttribute(star), rating.histogram[star - 1]])),
    }),
    fromItem: (item: Item): ProductRatingModel => {
      // A counter a write never moved is absent: it counts 0.
      const counter = (name: string) => (item[name] === undefined ? 0 : int(item, name));
      return {
        kind: 'ProductRating',
        productId: str(item, 'productId'),
        count: counter(RATING_ATTRIBUTES.count),
        sum: counter(RATING_ATTRIBUTES.sum),
        histogram: STARS.map((star) => counter(starsAttribute(star))) as ProductRatingModel['histogram'],
      };
    },
  },
});

/**
 * Whether a user bought a product: the ids of their orders of it that the stream counted and
 * that were not cancelled since (`orderIds`, a string set, absent when none). Kept in the sale
 * markers' transactions, so exactly once per order; bookkeeping no answer reads as such.
 */
export const BUYER = defineEntity({
  type: 'ProductBuyer',
  item: 'buyer record',
  holds: '`orderIds`: the placed, shipped or delivered orders of the product by the user',
  key: { PK: PRODUCT_PK, SK: BUYER_SK },
  visibility: 'admin',
  tags: [],
});

/** Whether a buyer record's item (or its absence) says the user bought the product. */
export const boughtIn = (item: Item | undefined): boolean =>
  item?.orderIds instanceof Set ? item.orderIds.size > 0 : Array.isArray(item?.orderIds) && item.orderIds.length > 0;

/** Bounds of a review in an event from outside the process: what a write can store, no more. */
function readReview(value: unknown): ReviewModel {
  const raw = read.record(value, 'review');
  if (raw.kind !== 'Review') throw new EventFieldError('review.kind is invalid');
  return {
    kind: 'Review',
    reviewId: read.id(raw.reviewId, 'review.reviewId'),
    productId: read.id(raw.productId, 'review.productId'),
    authorId: read.id(raw.authorId, 'review.authorId'),
    rating: read.integer(raw.rating, 'review.rating', 1, 5),
    title: read.text(raw.title, 'review.title', REVIEW_LIMITS.titleLength),
    body: read.text(raw.body, 'review.body', REVIEW_LIMITS.bodyLength),
    authorName: read.text(raw.authorName, 'review.authorName', REVIEW_LIMITS.authorNameLength),
    verifiedPurchase: read.boolean(raw.verifiedPurchase, 'review.verifiedPurchase'),
    createdAt: read.instant(raw.createdAt, 'review.createdAt'),
    updatedAt: read.instant(raw.updatedAt, 'review.updatedAt'),
    version: read.integer(raw.version, 'review.version', 1),
  };
}

/** A review's events, from its details item: one when it is added, heard by whoever watches its product. */
export const REVIEW_EVENTS = defineEvents(REVIEW, {
  node: 'Review',
  types: ['REVIEW_ADDED'],
  of: ({ name, after }) => (name === 'INSERT' && after ? { type: 'REVIEW_ADDED', node: after, previous: null } : null),
  topics: [{ kind: TOPICS.productReviews, field: 'productId' }],
  readNode: readReview,
  // Nothing of a review before its change is told.
  readPrevious: (): null => null,
});

/** The key of a user's buyer record of a product. */
export const buyerKey = (productId: string, userId: string) => BUYER.keyOf({ productId, userId });
