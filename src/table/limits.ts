/**
 * The fixed limits that more than one layer reads: the writes enforce them, the events and caches
 * bound their messages by them, and the cost estimate's figures (the `@cost` and `@listSize`
 * directives of schema.graphql) are chosen from them. They are part of the API, not settings:
 * the configurable limits live in the configuration.
 */

/**
 * The longest texts and largest numbers the mutations accept: the writes refuse more, a text
 * field's `@cost` is a unit per 100 characters of its longest value, the event schema admits
 * what they allow.
 */
export const INPUT_LIMITS = {
  nameLength: 100,
  productNameLength: 200,
  descriptionLength: 2000,
  maxStock: 1_000_000,
  maxQuantity: 1000,
} as const;

/** TransactWriteItems takes 100 actions; an order needs 3 besides one per line. */
export const MAX_ORDER_LINES = 97;

/**
 * Most userErrors one payload carries: a request of many bad lines must not answer with
 * kilobytes of errors per line it sent. The last slot says how many more were found.
 */
export const MAX_USER_ERRORS = 20;

/** A connection's page when the request names no `first` or `last`. */
export const DEFAULT_PAGE_SIZE = 20;
/** The largest `first` or `last` a connection accepts. */
export const MAX_PAGE_SIZE = 100;

/**
 * Categories listed at most (the first by name). A bound on what one request may fan out to:
 * each category's `products` is a Query of its own, and the cost limit counts them at this many
 * (`Query.categories`' `@listSize`).
 */
export const MAX_CATEGORIES = 100;

/**
 * The writes' trace contexts one invalidation message carries at most: the stream side keeps
 * that many per batch, the bus drops any beyond (the eviction's span links them).
 */
export const MAX_TRACEPARENTS = 16;
