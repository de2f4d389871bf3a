/**
 * A product's rating and reviews. `RatingLine` sits in the product's summary (no control in it:
 * the keyboard goes from the name to the quantity); `Reviews` is a section of its own after the
 * description: the histogram, the signed-in shopper's own review to write, edit or delete, and
 * the reviews a page at a time, newest first (the page's first read brings them), highest or
 * lowest rated. userErrors show beside the field they name; anything else as one message.
 */
import { useEffect, useState } from 'react';
import type { FormEvent } from 'react';
import { ApiError, request } from '../api';
import type { UserError } from '../api';
import { useSession } from '../auth';
import {
  EditReviewDocument,
  MyReviewDocument,
  ProductReviewsDocument,
  RemoveReviewDocument,
  WriteReviewDocument,
} from '../gql/graphql';
import type { ProductDetailsQuery, ReviewOrder, StoreReviewFragment } from '../gql/graphql';
import { href } from '../route';
import { useKept, useQuery } from '../useQuery';
import { Problem } from './States';

type Product = NonNullable<ProductDetailsQuery['product']>;
type Rating = Product['rating'];

/** Reviews per page: the product page's first read brings this many, "More reviews" the next. */
export const REVIEWS_PAGE = 5;
const ORDERS: [ReviewOrder, string][] = [
  ['NEWEST', 'Newest first'],
  ['HIGHEST_RATING', 'Highest rated'],
  ['LOWEST_RATING', 'Lowest rated'],
];
/** The API's bounds (schema.graphql): said by the form, checked again by the API. */
const TITLE_MAX = 120;
const BODY_MAX = 5000;

const starsText = (rating: number) => `${'★'.repeat(rating)}${'☆'.repeat(5 - rating)}`;
const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;
const failure = (error: unknown) =>
  error instanceof ApiError ? error : new ApiError('failed', 'Something went wrong. Try again.');

/** The rating under the product's name: its stars, average and count, or that it has none yet. */
export function RatingLine({ rating }: { rating: Rating }) {
  if (rating.average === null) return <p className="rating-line">No reviews yet</p>;
  return (
    <p className="rating-line">
      <span className="stars" role="img" aria-label={`Rated ${rating.average.toFixed(1)} out of 5`}>
        {starsText(Math.round(rating.average))}
      </span>{' '}
      <span data-testid="average">{rating.average.toFixed(1)}</span> · {plural(rating.count, 'review')}
    </p>
  );
}

function Histogram({ rating }: { rating: Rating }) {
  const widest = Math.max(1, ...rating.histogram);
  return (
    <div className="rating" data-testid="rating">
      <p>
        <span data-testid="review-count">{plural(rating.count, 'review')}</span>
        {rating.average !== null && <>, {rating.average.toFixed(1)} out of 5 on average</>}
      </p>
      <ol className="histogram" aria-label="Reviews by stars">
        {[5, 4, 3, 2, 1].map((stars) => {
          const count = rating.histogram[stars - 1] ?? 0;
          return (
            <li key={stars} data-testid={`stars-${stars}`} data-count={count}>
              <span className="label">{plural(stars, 'star')}</span>
              <span className="bar" aria-hidden="true">
                <span style={{ width: `${(100 * count) / widest}%` }} />
              </span>
              <span className="n">{count}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

interface Shown {
  order: ReviewOrder;
  reviews: StoreReviewFragment[];
  next: string | null;
}

/** The reviews section. `onChanged` reads the product page again after a write (its rating moved). */
export function Reviews({ product, onChanged }: { product: Product; onChanged: () => void }) {
  const { productId } = product;
  const newest: Shown = {
    order: 'NEWEST',
    reviews: product.reviews.nodes,
    next: product.reviews.pageInfo.hasNextPage ? product.reviews.pageInfo.endCursor : null,
  };
  const [order, setOrder] = useState<ReviewOrder>('NEWEST');
  // What this section read itself: another order, or more pages. Null: the page's own first page.
  const [shown, setShown] = useState<Shown | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const read = async (orderBy: ReviewOrder, after: string | null, before: StoreReviewFragment[]) => {
    setBusy(true);
    try {
      const data = await request(ProductReviewsDocument, { productId, first: REVIEWS_PAGE, after, orderBy });
      const page = data.product?.reviews;
      if (!page) return;
      setShown({
        order: orderBy,
        reviews: [...before, ...page.nodes],
        next: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
      });
      setError(null);
    } catch (reason) {
      setError(failure(reason));
    } finally {
      setBusy(false);
    }
  };

  // The page read again (after a write): start over from its first page, in the chosen order.
  useEffect(() => {
    if (order === 'NEWEST') setShown(null);
    else void read(order, null, []);
  }, [product]);

  const choose = (next: ReviewOrder) => {
    setOrder(next);
    if (next === 'NEWEST') setShown(null);
    else void read(next, null, []);
  };
  const list = shown ?? newest;

  return (
    <section className="reviews" aria-labelledby="reviews-title">
      <h2 id="reviews-title">Reviews</h2>
      <Histogram rating={product.rating} />
      <OwnReview productId={productId} onChanged={onChanged} />
      {product.rating.count > 0 && (
        <label className="review-order">
          Sort reviews
          <select value={order} onChange={(e) => choose(e.target.value as ReviewOrder)}>
            {ORDERS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      )}
      {error && <Problem error={error} onRetry={() => void read(order, null, [])} />}
      {list.reviews.length === 0 ? (
        <p>No reviews yet. Be the first to review this product.</p>
      ) : (
        <ul className="review-list" data-testid="reviews" aria-busy={busy}>
          {list.reviews.map((review) => (
            <li key={review.reviewId} data-testid="review">
              <ReviewText review={review} />
            </li>
          ))}
        </ul>
      )}
      {list.next && list.order === order && (
        <button
          type="button"
          className="more"
          disabled={busy}
          onClick={() => void read(order, list.next, list.reviews)}
        >
          More reviews
        </button>
      )}
    </section>
  );
}

function ReviewText({ review }: { review: StoreReviewFragment }) {
  return (
    <article aria-label={`${review.title}, by ${review.authorName}`}>
      <p className="stars" role="img" aria-label={`${review.rating} out of 5 stars`} data-rating={review.rating}>
        {starsText(review.rating)}
      </p>
      <h3>{review.title}</h3>
      <p className="byline">
        {review.authorName}, {new Date(review.createdAt).toLocaleDateString('en-US')}
        {review.verifiedPurchase && <span className="verified"> · Verified purchase</span>}
      </p>
      {review.body && <p>{review.body}</p>}
    </article>
  );
}

const errorsAt = (errors: UserError[], field: string) => errors.filter((error) => error.field?.join('.') === field);
const FORM_FIELDS = ['rating', 'title', 'body'];

function FieldErrors({ errors, field }: { errors: UserError[]; field: string }) {
  return errorsAt(errors, field).map((error) => (
    <p className="field-error" id={`review-${field}-error`} data-field={field} key={error.message}>
      {error.message}
    </p>
  ));
}

/** The signed-in shopper's review of the product: a form to write it, or to edit or delete it. */
function OwnReview({ productId, onChanged }: { productId: string; onChanged: () => void }) {
  const { session } = useSession();
  const [notice, setNotice] = useState('');
  const query = useQuery(MyReviewDocument, { productId }, { auth: true, skip: !session });
  const mine = { ...useKept(query, `${session?.userId ?? ''}:${productId}`), retry: query.retry, reload: query.reload };
  if (!session) {
    return (
      <p>
        <a href={href.signIn(`product/${encodeURIComponent(productId)}`)}>Sign in to write a review</a>
      </p>
    );
  }
  if (mine.status === 'loading') return null;
  if (mine.status === 'failed')
    return <Problem error={mine.error} onRetry={mine.retry} then={`product/${productId}`} />;
  const review = mine.data.viewer?.review ?? null;
  return (
    <>
      <ReviewForm
        // A new form for each version: its fields start from what is stored.
        key={review ? `${review.reviewId}:${review.version}` : 'new'}
        productId={productId}
        review={review}
        onChanged={(message) => {
          setNotice(message);
          mine.reload();
          onChanged();
        }}
      />
      <p className="review-notice" role="status">
        {notice}
      </p>
    </>
  );
}

function ReviewForm({
  productId,
  review,
  onChanged,
}: {
  productId: string;
  review: StoreReviewFragment | null;
  onChanged: (message: string) => void;
}) {
  const [stars, setStars] = useState(review?.rating ?? 5);
  const [title, setTitle] = useState(review?.title ?? '');
  const [body, setBody] = useState(review?.body ?? '');
  const [errors, setErrors] = useState<UserError[]>([]);
  const [problem, setProblem] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  /** One write; on success the review and the page are read again. */
  const write = async (send: () => Promise<{ userErrors: UserError[]; ok: boolean }>, done: string) => {
    setBusy(true);
    setProblem(null);
    try {
      const { userErrors, ok } = await send();
      setErrors(userErrors);
      // Written, or changed elsewhere since it was read (VERSION_CONFLICT): show what is stored now.
      if (ok) onChanged(done);
      else if (userErrors.some((error) => error.code === 'VERSION_CONFLICT')) onChanged('');
    } catch (error) {
      setProblem(failure(error));
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void write(
      async () => {
        if (review) {
          const input = { reviewId: review.reviewId, expectedVersion: review.version, rating: stars, title, body };
          const { updateReview } = await request(EditReviewDocument, { input }, { auth: true });
          return { userErrors: updateReview.userErrors, ok: updateReview.review !== null };
        }
        const input = { productId, rating: stars, title, body };
        const { addReview } = await request(WriteReviewDocument, { input }, { auth: true });
        return { userErrors: addReview.userErrors, ok: addReview.review !== null };
      },
      review ? 'Your review was updated.' : 'Thank you for your review.',
    );
  };

  const remove = () => {
    if (!review) return;
    void write(async () => {
      const { deleteReview } = await request(
        RemoveReviewDocument,
        { input: { reviewId: review.reviewId } },
        { auth: true },
      );
      return { userErrors: deleteReview.userErrors, ok: deleteReview.deletedReviewId !== null };
    }, 'Your review was deleted.');
  };

  const general = errors.filter((error) => !error.field || !FORM_FIELDS.includes(error.field.join('.')));
  const invalid = (field: string) =>
    errorsAt(errors, field).length > 0
      ? { 'aria-invalid': true as const, 'aria-describedby': `review-${field}-error` }
      : {};
  return (
    <form className="review-form" onSubmit={submit} aria-labelledby="review-form-title">
      <h3 id="review-form-title">{review ? 'Your review' : 'Write a review'}</h3>
      <div className="field">
        <label htmlFor="review-rating">Stars</label>
        <select
          id="review-rating"
          value={stars}
          onChange={(e) => setStars(Number(e.target.value))}
          {...invalid('rating')}
        >
          {[5, 4, 3, 2, 1].map((value) => (
            <option key={value} value={value}>
              {plural(value, 'star')}
            </option>
          ))}
        </select>
        <FieldErrors errors={errors} field="rating" />
      </div>
      <div className="field">
        <label htmlFor="review-title">Title</label>
        <input
          id="review-title"
          value={title}
          maxLength={TITLE_MAX}
          onChange={(e) => setTitle(e.target.value)}
          {...invalid('title')}
        />
        <FieldErrors errors={errors} field="title" />
      </div>
      <div className="field">
        <label htmlFor="review-body">Review</label>
        <textarea
          id="review-body"
          value={body}
          maxLength={BODY_MAX}
          rows={4}
          onChange={(e) => setBody(e.target.value)}
          {...invalid('body')}
        />
        <FieldErrors errors={errors} field="body" />
      </div>
      {general.map((error) => (
        <p className="field-error" role="alert" key={error.message}>
          {error.message}
        </p>
      ))}
      {problem && <Problem error={problem} then={`product/${productId}`} />}
      <div className="actions">
        <button type="submit" disabled={busy}>
          {review ? 'Save changes' : 'Post review'}
        </button>
        {review && (
          <button type="button" className="secondary" disabled={busy} onClick={remove}>
            Delete review
          </button>
        )}
      </div>
    </form>
  );
}
