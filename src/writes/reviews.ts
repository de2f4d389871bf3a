/**
 * addReview, updateReview and deleteReview. A review's details, its copy in its product's
 * partition and the product's rating move in one transaction (src/table/entities/review.ts), so
 * the rating is always the count of the reviews there are, whatever runs at the same time:
 *
 * - an add puts the details conditioned on their absence (the review's id is its product and
 *   author: a second review by the same author is REVIEW_EXISTS) and adds 1 and its stars;
 * - an edit and a delete are conditioned on the version they read, and move the rating by the
 *   difference between that version and the new one (or take it away), so two concurrent
 *   writes of one review cannot both count.
 *
 * None of them touches the product item, whose stock the orders write: a review never waits
 * for, or conflicts with, an order. What each costs: docs/access-patterns.md.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetItems } from '../db/batchGet.js';
import type { DataSources } from '../db/loaders.js';
import { Transaction, TransactionConflictError, transactWrite } from '../db/transact.js';
import type { TransactItem } from '../db/transact.js';
import { itemToUser } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import {
  boughtIn,
  buyerKey,
  PRODUCT_RATING,
  PRODUCT_REVIEW,
  RATING_ATTRIBUTES,
  REVIEW,
  REVIEW_LIMITS,
  reviewIdOf,
} from '../table/entities/review.js';
import { productKey, userKey } from '../table/keys.js';
import type { ReviewModel } from '../table/models.js';
import { failed, InputChecker, succeeded, userError } from './userErrors.js';
import type { WriteResult } from './userErrors.js';
import { checkId, checkInt, checkText } from './validate.js';

export interface AddReviewInput {
  productId: string;
  rating: number;
  title: string;
  body: string;
}

export interface UpdateReviewInput {
  reviewId: string;
  expectedVersion: number;
  rating?: number | null | undefined;
  title?: string | null | undefined;
  body?: string | null | undefined;
}

/** Who writes: the signed-in viewer, and whether they are an admin (who may delete any review). */
export interface ReviewWriter {
  userId: string;
  admin: boolean;
}

/** The condition of a put or delete. */
type Conditions = Pick<
  NonNullable<TransactItem['Put']>,
  | 'ConditionExpression'
  | 'ExpressionAttributeNames'
  | 'ExpressionAttributeValues'
  | 'ReturnValuesOnConditionCheckFailure'
>;

/** A deletion that met a concurrent edit reads the review again, at most this often. */
const DELETE_ATTEMPTS = 3;

const checkTitle = (check: InputChecker, title: string) => checkText(check, 'title', title, REVIEW_LIMITS.titleLength);
const checkBody = (check: InputChecker, body: string) =>
  checkText(check, 'body', body, REVIEW_LIMITS.bodyLength, { multiline: true, allowEmpty: true });
const checkStars = (check: InputChecker, rating: number) => checkInt(check, ['rating'], rating, 1, 5);

/**
 * The rating's counters moved by `count` reviews and, per star, `stars` (an add: +1 and +1 at its
 * stars; an edit: -1 at the old stars, +1 at the new; a delete: -1 and -1). Creates the item on
 * the first review.
 */
export function ratingChange(
  tableName: string,
  productId: string,
  count: number,
  stars: ReadonlyMap<number, number>,
): TransactItem {
  const adds = [`${RATING_ATTRIBUTES.count} :count`, `${RATING_ATTRIBUTES.sum} :sum`];
  const values: Record<string, unknown> = { ':type': PRODUCT_RATING.type, ':productId': productId, ':count': count };
  let sum = 0;
  for (const [star, delta] of stars) {
    if (delta === 0) continue;
    adds.push(`${RATING_ATTRIBUTES.stars(star)} :stars${star}`);
    values[`:stars${star}`] = delta;
    sum += star * delta;
  }
  values[':sum'] = sum;
  return {
    Update: {
      TableName: tableName,
      Key: PRODUCT_RATING.keyOf({ productId }),
      UpdateExpression: `SET entityType = :type, productId = :productId ADD ${adds.join(', ')}`,
      ExpressionAttributeValues: values,
    },
  };
}

const notFound = <T>(reviewId: string) =>
  failed<T>(userError('NOT_FOUND', ['reviewId'], `No review with reviewId "${reviewId}"`));

/** The review's details and its copy, put in `transaction` (conditions as `details` says). */
function putBoth(tableName: string, transaction: Transaction, review: ReviewModel, details: Conditions) {
  return transaction
    .add('review', { Put: { TableName: tableName, Item: REVIEW.codec.toItem(review), ...details } })
    .add('listing', { Put: { TableName: tableName, Item: PRODUCT_REVIEW.codec.toItem(review) } });
}

/**
 * The viewer's review of a product. Reads the author's profile (their name), the product and
 * the author's buyer record of it in one BatchGetItem, then one transaction.
 */
export async function addReview(
  { dynamo, tableName }: DataSources,
  author: ReviewWriter,
  input: AddReviewInput,
  now = new Date(),
): Promise<WriteResult<ReviewModel>> {
  const check = new InputChecker();
  const productId = checkId(check, 'productId', input.productId);
  const rating = checkStars(check, input.rating);
  const title = checkTitle(check, input.title);
  const body = checkBody(check, input.body);
  if (!check.ok || productId === undefined || rating === undefined || title === undefined || body === undefined) {
    return failed(...check.errors);
  }
  const [profile, product, buyer] = await batchGetItems(
    dynamo.doc,
    tableName,
    [userKey(author.userId), productKey(productId), buyerKey(productId, author.userId)],
    { consistentRead: true },
  );
  if (!profile) return failed(userError('NOT_FOUND', null, 'Create your profile (createUser) before reviewing'));
  if (!product) return failed(userError('NOT_FOUND', ['productId'], `No product with productId "${productId}"`));
  const at = now.toISOString();
  const review: ReviewModel = {
    kind: 'Review',
    reviewId: reviewIdOf(productId, author.userId),
    productId,
    authorId: author.userId,
    rating,
    title,
    body,
    authorName: itemToUser(profile).name,
    verifiedPurchase: boughtIn(buyer ?? undefined),
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  const transaction = putBoth(tableName, new Transaction(), review, {
    ConditionExpression: 'attribute_not_exists(PK)',
  }).add('rating', ratingChange(tableName, productId, 1, new Map([[rating, 1]])));
  const outcome = await transactWrite(dynamo.doc, transaction);
  if (outcome.committed) return succeeded(review, transaction.touched);
  if (outcome.cancellation.failed('review')) {
    return failed(
      userError('REVIEW_EXISTS', ['productId'], 'You have reviewed this product already: edit that review'),
    );
  }
  throw new Error(`addReview cancelled unexpectedly: ${outcome.cancellation.describe()}`);
}

/** The review's details, read strongly consistent; undefined when there is none. */
async function readReview({ dynamo, tableName }: DataSources, reviewId: string): Promise<ReviewModel | undefined> {
  const read = await dynamo.doc.send(
    new GetCommand({ TableName: tableName, Key: REVIEW.keyOf({ reviewId }), ConsistentRead: true }),
  );
  return read.Item ? REVIEW.codec.fromItem(read.Item) : undefined;
}

/** Conditioned on the version read: a write between the read and this transaction cancels it. */
const atVersion = (version: number): Conditions => ({
  ConditionExpression: '#version = :version',
  ExpressionAttributeNames: { '#version': 'version' },
  ExpressionAttributeValues: { ':version': version },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
});

/**
 * The author's edit of their review (another customer's, or an admin's edit, reads as
 * NOT_FOUND). Its verifiedPurchase is decided again: an order placed since counts.
 */
export async function updateReview(
  data: DataSources,
  author: ReviewWriter,
  input: UpdateReviewInput,
  now = new Date(),
): Promise<WriteResult<ReviewModel>> {
  const { dynamo, tableName } = data;
  const check = new InputChecker();
  const reviewId = checkId(check, 'reviewId', input.reviewId);
  const rating = input.rating == null ? undefined : checkStars(check, input.rating);
  const title = input.title == null ? undefined : checkTitle(check, input.title);
  const body = input.body == null ? undefined : checkBody(check, input.body);
  if (input.rating == null && input.title == null && input.body == null) {
    check.invalid(null, 'Give at least one field to change');
  }
  if (!check.ok || reviewId === undefined) return failed(...check.errors);

  const before = await readReview(data, reviewId);
  if (!before || before.authorId !== author.userId) return notFound(reviewId);
  const conflict = (version: unknown) =>
    failed<ReviewModel>(
      userError(
        'VERSION_CONFLICT',
        ['expectedVersion'],
        `The review is at version ${String(version)}, not ${input.expectedVersion}; re-read it and retry`,
      ),
    );
  if (before.version !== input.expectedVersion) return conflict(before.version);
  const buyer = await dynamo.doc.send(
    new GetCommand({ TableName: tableName, Key: buyerKey(before.productId, author.userId), ConsistentRead: true }),
  );
  const after: ReviewModel = {
    ...before,
    rating: rating ?? before.rating,
    title: title ?? before.title,
    body: body ?? before.body,
    verifiedPurchase: boughtIn(buyer.Item),
    updatedAt: now.toISOString(),
    version: before.version + 1,
  };
  const transaction = putBoth(tableName, new Transaction(), after, atVersion(before.version));
  if (after.rating !== before.rating) {
    const stars = new Map([
      [before.rating, -1],
      [after.rating, 1],
    ]);
    transaction.add('rating', ratingChange(tableName, before.productId, 0, stars));
  }
  const outcome = await transactWrite(dynamo.doc, transaction);
  if (outcome.committed) return succeeded(after, transaction.touched);
  const old: Item | undefined = outcome.cancellation.old('review');
  if (!old) return notFound(reviewId);
  return conflict(old.version);
}

/**
 * Deletes a review: its author's, or any for an admin (another customer's reads as
 * NOT_FOUND). Answers the deleted review's id.
 */
export async function deleteReview(
  data: DataSources,
  writer: ReviewWriter,
  input: { reviewId: string },
): Promise<WriteResult<string>> {
  const { dynamo, tableName } = data;
  const check = new InputChecker();
  const reviewId = checkId(check, 'reviewId', input.reviewId);
  if (reviewId === undefined) return failed(...check.errors);
  for (let attempt = 0; attempt < DELETE_ATTEMPTS; attempt++) {
    const review = await readReview(data, reviewId);
    if (!review || !(writer.admin || review.authorId === writer.userId)) return notFound(reviewId);
    const transaction = new Transaction()
      .add('review', {
        Delete: { TableName: tableName, Key: REVIEW.keyOf({ reviewId }), ...atVersion(review.version) },
      })
      .add('listing', { Delete: { TableName: tableName, Key: PRODUCT_REVIEW.keyOf(review) } })
      .add('rating', ratingChange(tableName, review.productId, -1, new Map([[review.rating, -1]])));
    const outcome = await transactWrite(dynamo.doc, transaction);
    if (outcome.committed) return succeeded(reviewId, transaction.touched);
    // Edited (or deleted) since it was read: read it again, and take away what it is now.
  }
  // Changed under every attempt: the client may retry later (CONFLICT, like a transaction's conflicts).
  throw new TransactionConflictError(DELETE_ATTEMPTS);
}
