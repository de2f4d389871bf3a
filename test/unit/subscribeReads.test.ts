/**
 * The subscribe-read buckets on their own, with a clock the test moves: a burst of the budget
 * passes, the next read is refused with the time until a token is back, and the buckets refill
 * at the budget per window.
 */
import { describe, expect, it } from 'vitest';
import { createSubscribeReadLimiter, RateLimitedError } from '../../src/pipeline/execution/subscribeReads.js';

const aLimiter = (overrides: Partial<{ perViewer: number; perInstance: number; windowMs: number }> = {}) => {
  const clock = { now: 0 };
  const limiter = createSubscribeReadLimiter(
    { perViewer: 4, perInstance: 10, windowMs: 8000, ...overrides },
    () => clock.now,
  );
  return { clock, limiter };
};

const refusal = (take: () => void) => {
  try {
    take();
  } catch (error) {
    if (error instanceof RateLimitedError) return error.extensions;
    throw error;
  }
  return undefined;
};

describe('subscribe-read budgets', () => {
  it("lets a burst of the viewer's budget through, then refuses with the seconds until a read is back", () => {
    const { limiter } = aLimiter();
    for (let i = 0; i < 4; i++) limiter.take('alice');
    expect(refusal(() => limiter.take('alice'))).toEqual({
      code: 'RATE_LIMITED',
      limit: 'SUBSCRIBE_READS_PER_VIEWER',
      retryAfterSeconds: 2,
    });
  });

  it('refills a viewer at the budget per window, never above the budget', () => {
    const { clock, limiter } = aLimiter();
    for (let i = 0; i < 4; i++) limiter.take('alice');
    clock.now = 2000; // a quarter of the window: one read back
    limiter.take('alice');
    expect(refusal(() => limiter.take('alice'))).toMatchObject({ limit: 'SUBSCRIBE_READS_PER_VIEWER' });
    clock.now = 1_000_000;
    for (let i = 0; i < 4; i++) limiter.take('alice');
    expect(refusal(() => limiter.take('alice'))).toMatchObject({ limit: 'SUBSCRIBE_READS_PER_VIEWER' });
  });

  it("refuses everyone once the instance's budget is spent, and a refusal takes nothing", () => {
    const { clock, limiter } = aLimiter();
    for (const viewer of ['a', 'a', 'a', 'a', 'b', 'b', 'b', 'b', 'c', 'c']) limiter.take(viewer);
    expect(refusal(() => limiter.take('d'))).toEqual({
      code: 'RATE_LIMITED',
      limit: 'SUBSCRIBE_READS_PER_INSTANCE',
      retryAfterSeconds: 1,
    });
    // The refused reads took nothing from d's bucket: with the instance refilled, d has all four.
    clock.now = 8000;
    for (let i = 0; i < 4; i++) limiter.take('d');
    expect(refusal(() => limiter.take('d'))).toMatchObject({ limit: 'SUBSCRIBE_READS_PER_VIEWER' });
  });

  it('forgets viewers whose bucket is full again, so many viewers do not grow the limiter', () => {
    const { clock, limiter } = aLimiter({ perInstance: 1_000_000 });
    for (let i = 0; i < 10_000; i++) limiter.take(`viewer-${i}`);
    expect(limiter.trackedViewers).toBe(10_000);
    clock.now = 8000;
    limiter.take('one-more');
    expect(limiter.trackedViewers).toBe(1);
  });
});
