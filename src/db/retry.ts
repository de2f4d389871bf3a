/**
 * The retry policy of every DynamoDB call that retries on its own (batch reads and writes,
 * transactions, the stream shard readers): a bounded number of attempts, each after an
 * exponential backoff with full jitter, so that callers retrying together spread out.
 */

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The policy of BatchGetItem and BatchWriteItem for their unprocessed keys and items. */
export const DEFAULT_BATCH_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 25, maxDelayMs: 1000 };

/** Full jitter (AWS Architecture Blog): a random delay in [0, min(max, base * 2^attempt)). */
export const backoffDelay = (attempt: number, policy: RetryPolicy): number =>
  Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
