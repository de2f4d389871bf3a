/**
 * What subscribing may read. Opening a subscription can read the table (`orderUpdated` reads
 * its order to apply the rules of `order(orderId)`); a customer who opens thousands of
 * subscriptions, over hundreds of sockets, each within every per-socket bound, would otherwise
 * make as many reads at once and starve every other request of DynamoDB.
 *
 * Every DynamoDB read made while a subscription opens takes one token from two buckets: the
 * viewer's and the instance's. Each holds `perViewer` (`perInstance`) tokens and refills at that
 * many per `windowMs`, so a burst of a page's worth of subscriptions passes at once and a
 * sustained rate is bounded. A read with an empty bucket is never sent: the opening fails with
 * RATE_LIMITED (`extensions.limit` names the setting, `extensions.retryAfterSeconds` says when a
 * token is back). Subscriptions that open without a read (`orderEvents`) take nothing, and the
 * events of an open subscription are held to the operation budgets instead (meter.ts).
 *
 * One limiter per pipeline, so per API instance; execution.ts applies it to the opening of every
 * subscription, whichever transport carries it (WebSocket, SSE).
 */
import { GraphQLError } from 'graphql';
import { ErrorCode } from '../../errors.js';

export interface SubscribeReadBudgets {
  /** Reads one viewer's subscriptions may make per window (SUBSCRIBE_READS_PER_VIEWER). */
  perViewer: number;
  /** Reads the subscriptions of all viewers on this instance may make per window (SUBSCRIBE_READS_PER_INSTANCE). */
  perInstance: number;
  /** The window (SUBSCRIBE_READ_WINDOW_MS): a bucket refills completely over it. */
  windowMs: number;
}

export type SubscribeReadLimit = 'SUBSCRIBE_READS_PER_VIEWER' | 'SUBSCRIBE_READS_PER_INSTANCE';

/** A subscription refused while opening: its read would exceed a subscribe-read budget. */
export class RateLimitedError extends GraphQLError {
  constructor(limit: SubscribeReadLimit, budget: number, windowMs: number, retryAfterSeconds: number) {
    const whose = limit === 'SUBSCRIBE_READS_PER_VIEWER' ? 'for one viewer' : 'on this server';
    super(
      `Too many subscriptions opened: at most ${budget} reads per ${windowMs / 1000} s ${whose}; try again in ${retryAfterSeconds} s`,
      { extensions: { code: ErrorCode.RATE_LIMITED, limit, retryAfterSeconds } },
    );
  }
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Viewers whose bucket is tracked at most; past it, full buckets (the same as none) are dropped
 * first, then the oldest. The instance bucket bounds everything whatever is dropped here.
 */
const MAX_TRACKED_VIEWERS = 10_000;

/** Token buckets for subscribe-time reads, one per viewer and one for the instance. `now` in ms. */
export function createSubscribeReadLimiter(budgets: SubscribeReadBudgets, now: () => number = () => performance.now()) {
  const viewers = new Map<string, Bucket>();
  const instance: Bucket = { tokens: budgets.perInstance, at: now() };

  const refill = (bucket: Bucket, capacity: number, time: number) => {
    bucket.tokens = Math.min(capacity, bucket.tokens + ((time - bucket.at) * capacity) / budgets.windowMs);
    bucket.at = time;
  };
  const retryAfter = (bucket: Bucket, capacity: number) =>
    Math.max(1, Math.ceil(((1 - bucket.tokens) * budgets.windowMs) / capacity / 1000));

  const forget = (time: number) => {
    for (const [key, bucket] of viewers) {
      refill(bucket, budgets.perViewer, time);
      if (bucket.tokens >= budgets.perViewer) viewers.delete(key);
    }
    for (const key of viewers.keys()) {
      if (viewers.size < MAX_TRACKED_VIEWERS) break;
      viewers.delete(key);
    }
  };

  return {
    /**
     * Takes one read for `viewer` (a user id; '' for anonymous) from both buckets, or throws
     * RateLimitedError and takes nothing.
     */
    take(viewer: string): void {
      const time = now();
      let own = viewers.get(viewer);
      if (!own) {
        if (viewers.size >= MAX_TRACKED_VIEWERS) forget(time);
        own = { tokens: budgets.perViewer, at: time };
        viewers.set(viewer, own);
      }
      refill(own, budgets.perViewer, time);
      refill(instance, budgets.perInstance, time);
      if (own.tokens < 1) {
        throw new RateLimitedError(
          'SUBSCRIBE_READS_PER_VIEWER',
          budgets.perViewer,
          budgets.windowMs,
          retryAfter(own, budgets.perViewer),
        );
      }
      if (instance.tokens < 1) {
        throw new RateLimitedError(
          'SUBSCRIBE_READS_PER_INSTANCE',
          budgets.perInstance,
          budgets.windowMs,
          retryAfter(instance, budgets.perInstance),
        );
      }
      own.tokens -= 1;
      instance.tokens -= 1;
    },
    /** Viewers tracked now (a full bucket may still be among them until it is swept). */
    get trackedViewers(): number {
      return viewers.size;
    },
  };
}

export type SubscribeReadLimiter = ReturnType<typeof createSubscribeReadLimiter>;
