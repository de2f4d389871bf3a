/**
 * Where a read hands its outcome within its own last `then`: the value, or why it failed. A read
 * that takes a continuation costs one promise per DynamoDB request, whatever its caller does
 * next (the planned executor's rounds count promises: docs/performance.md); a caller that wants a
 * plain promise passes `AS_PROMISE`, whose failure rethrows (the promise rejects).
 */
export interface Continuation<T, R> {
  done(this: void, value: T): R;
  failed(this: void, error: unknown): R;
}

const rethrow = (error: unknown): never => {
  throw error;
};

/** The value as the promise's value, a failure as its rejection. */
export const asPromise = <T>(): Continuation<T, T> => ({ done: (value) => value, failed: rethrow });

/** `then.done(compute())`, or `then.failed` with what either threw: a continuation never lets a throw escape. */
export function settle<T, R>(then: Continuation<T, R>, compute: () => T): R {
  let value: T;
  try {
    value = compute();
  } catch (error) {
    return then.failed(error);
  }
  return then.done(value);
}

/** `then` with `map` applied to the value first (a throw in `map` goes to `failed`). */
export const mapped = <A, B, R>(then: Continuation<B, R>, map: (value: A) => B): Continuation<A, R> => ({
  done: (value) => settle(then, () => map(value)),
  failed: then.failed,
});
