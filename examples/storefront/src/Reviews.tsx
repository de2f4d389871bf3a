/**
 * A product's reviews on its page: the rating with its histogram, the reviews a page at a time in
 * the order the shopper picks, and the signed-in shopper's own review to write, edit or delete.
 * userErrors appear beside the field they name; anything else (the API down, a refused token)
 * appears as one message, never as an endless "Loading…".
 */
import { useEffect, useState } from 'react';
import type { FormEvent } from 'react';
import { request, VIEWER_ID } from './api';
import type { UserError } from './api';
import {
  EditReviewDocument,
  MyReviewDocument,
  ProductReviewsDocument,
  RemoveReviewDocument,
  WriteReviewDocument,
} from './gql/graphql';
import type { ProductReviewsQuery, ReviewOrder, StoreReviewFragment } from './gql/graphql';

/** Reviews shown per page ("More reviews" loads the next). */
const PAGE = 5;
const ORDERS: [ReviewOrder, string][] = [
  ['NEWEST', 'Newest first'],
  ['HIGHEST_RATING', 'Highest rated'],
  ['LOWEST_RATING', 'Lowest rated'],
];
/** The server's bounds (schema.graphql): the form says them instead of letting a paste fail. */
const TITLE_MAX = 120;
const BODY_MAX = 5000;

type Rating = NonNullable<ProductReviewsQuery['product']>['rating'];

const starsText = (rating: number) => `${'★'.repeat(rating)}${'☆'.repeat(5 - rating)}`;
const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;

export function Reviews({ productId }: { productId: string }) {
  const [order, setOrder] = useState<ReviewOrder>('NEWEST');
  const [rating, setRating] = useState<Rating | null>(null);
  const [reviews, setReviews] = useState<StoreReviewFragment[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState('');
  // Bumped after each write: the list and the rating are read again.
  const [generation, setGeneration] = useState(0);

  const load = async (after: string | null) => {
    const data = await request(ProductReviewsDocument, { productId, first: PAGE, after, orderBy: order });
    if (!data.product) return;
    const page = data.product.reviews;
    setRating(data.product.rating);
    setReviews((shown) => (after === null ? page.nodes : [...(shown ?? []), ...page.nodes]));
    setNext(page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null);
    setError('');
  };

  useEffect(() => {
    let current = true;
    request(ProductReviewsDocument, { productId, first: PAGE, after: null, orderBy: order }).then(
      (data) => {
        if (!current || !data.product) return;
        setRating(data.product.rating);
        setReviews(data.product.reviews.nodes);
        setNext(data.product.reviews.pageInfo.hasNextPage ? data.product.reviews.pageInfo.endCursor : null);
        setError('');
      },
      (reason: Error) => current && setError(`Reviews could not be loaded: ${reason.message}`),
    );
    return () => {
      current = false;
    };
  }, [productId, order, generation]);

  return (
    <section className="reviews" aria-labelledby="reviews-heading">
      <h2 id="reviews-heading">Reviews</h2>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {rating && <RatingSummary rating={rating} />}
      {VIEWER_ID ? (
        <OwnReview productId={productId} onSaved={() => setGeneration((g) => g + 1)} />
      ) : (
        <p>Sign in to review this product.</p>
      )}
      <label className="review-order">
        Sort reviews
        <select value={order} onChange={(e) => setOrder(e.target.value as ReviewOrder)}>
          {ORDERS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {reviews === null ? (
        !error && <p>Loading reviews…</p>
      ) : reviews.length === 0 ? (
        <p>No reviews yet.</p>
      ) : (
        <ul className="review-list" data-testid="reviews">
          {reviews.map((review) => (
            <li key={review.reviewId} data-testid="review">
              <ReviewText review={review} />
            </li>
          ))}
        </ul>
      )}
      {next && (
        <button
          type="button"
          onClick={() => void load(next).catch((reason: Error) => setError(`More reviews failed: ${reason.message}`))}
        >
          More reviews
        </button>
      )}
    </section>
  );
}

function ReviewText({ review }: { review: StoreReviewFragment }) {
  return (
    <article>
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

function RatingSummary({ rating }: { rating: Rating }) {
  const widest = Math.max(1, ...rating.histogram);
  return (
    <div className="rating" data-testid="rating">
      <p>
        {rating.average === null ? (
          'Not rated yet'
        ) : (
          <>
            <strong data-testid="average">{rating.average.toFixed(1)}</strong> out of 5
          </>
        )}{' '}
        · <span data-testid="review-count">{plural(rating.count, 'review')}</span>
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
              <span className="count">{count}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

/** The userErrors that name `field` (e.g. "title"); those naming no field of the form go on top. */
const errorsAt = (errors: UserError[], field: string) => errors.filter((error) => error.field?.join('.') === field);
const FORM_FIELDS = ['rating', 'title', 'body'];

function FieldErrors({ errors, field }: { errors: UserError[]; field: string }) {
  return errorsAt(errors, field).map((error) => (
    <span
      className="error field-error"
      role="alert"
      data-field={field}
      id={`review-${field}-error`}
      key={error.message}
    >
      {error.message}
    </span>
  ));
}

/** The shopper's own review: a form to write one, or to edit or delete the one they wrote. */
function OwnReview({ productId, onSaved }: { productId: string; onSaved: () => void }) {
  const [mine, setMine] = useState<StoreReviewFragment | null | undefined>(undefined);
  const [stars, setStars] = useState(5);
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const [errors, setErrors] = useState<UserError[]>([]);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState('');

  const show = (review: StoreReviewFragment | null) => {
    setMine(review);
    setStars(review?.rating ?? 5);
    setTitle(review?.title ?? '');
    setBody(review?.body ?? '');
  };

  const reload = () =>
    request(MyReviewDocument, { productId }).then(
      (data) => show(data.viewer?.review ?? null),
      (reason: Error) => {
        setMine(null);
        setErrors([{ code: 'ERROR', field: null, message: `Your review could not be loaded: ${reason.message}` }]);
      },
    );

  useEffect(() => {
    void reload();
  }, [productId]);

  /** Runs one write; on success shows `message` and reads the review and the list again. */
  const write = async (send: () => Promise<{ userErrors: UserError[]; ok: boolean }>, message: string) => {
    setBusy(true);
    setNotice('');
    try {
      const { userErrors, ok } = await send();
      setErrors(userErrors);
      if (userErrors.some((error) => error.code === 'VERSION_CONFLICT')) await reload();
      if (ok) {
        setNotice(message);
        await reload();
        onSaved();
      }
    } catch (error) {
      setErrors([{ code: 'ERROR', field: null, message: (error as Error).message }]);
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void write(
      async () => {
        if (mine) {
          const input = { reviewId: mine.reviewId, expectedVersion: mine.version, rating: stars, title, body };
          const { updateReview } = await request(EditReviewDocument, { input });
          return { userErrors: updateReview.userErrors, ok: updateReview.review !== null };
        }
        const { addReview } = await request(WriteReviewDocument, { input: { productId, rating: stars, title, body } });
        return { userErrors: addReview.userErrors, ok: addReview.review !== null };
      },
      mine ? 'Your review was updated.' : 'Thank you for your review.',
    );
  };

  const remove = () => {
    if (!mine) return;
    void write(async () => {
      const { deleteReview } = await request(RemoveReviewDocument, { input: { reviewId: mine.reviewId } });
      return { userErrors: deleteReview.userErrors, ok: deleteReview.deletedReviewId !== null };
    }, 'Your review was deleted.');
  };

  if (mine === undefined) return <p>Loading your review…</p>;
  const general = errors.filter((error) => !error.field || !FORM_FIELDS.includes(error.field.join('.')));
  const invalid = (field: string) =>
    errorsAt(errors, field).length > 0 ? { 'aria-invalid': true, 'aria-describedby': `review-${field}-error` } : {};
  return (
    <form className="review-form" onSubmit={submit} aria-labelledby="review-form-heading">
      <h3 id="review-form-heading">{mine ? 'Your review' : 'Write a review'}</h3>
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
        <p className="error" role="alert" key={error.message}>
          {error.message}
        </p>
      ))}
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <div className="actions">
        <button type="submit" disabled={busy}>
          {mine ? 'Save changes' : 'Post review'}
        </button>
        {mine && (
          <button type="button" className="secondary" disabled={busy} onClick={remove}>
            Delete review
          </button>
        )}
      </div>
    </form>
  );
}
