/**
 * A subscription's events mapped one by one (each event's execution, its answer, what a
 * transport writes), with graphql-js's `mapAsyncIterator` semantics and without its async
 * functions: the same results, order and errors, a client's `return()` passed straight to the
 * source (which ends at once even while it waits), and the source closed when the mapping
 * throws. A large fan-out runs three such layers per subscription and event; written with
 * promise callbacks rather than async functions, a layer costs one promise and one result per
 * event instead of two async function frames and their promises, and a value mapped without a
 * promise is passed on without another.
 */

const isPromiseLike = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> =>
  typeof (value as { then?: unknown } | null | undefined)?.then === 'function';

/** `iterable`'s values, each mapped by `map` (awaited when it returns a promise). */
export function mapEvents<T, U>(
  iterable: AsyncIterable<T>,
  map: (value: T) => U | PromiseLike<U>,
): AsyncGenerator<U, void, void> {
  const iterator = iterable[Symbol.asyncIterator]();

  /** Closes the source (its own failure to close ignored) and rejects with `error`. */
  const abandon = async (error: unknown): Promise<never> => {
    if (typeof iterator.return === 'function') {
      try {
        await iterator.return();
      } catch {
        // The first error is the one to tell.
      }
    }
    throw error;
  };

  const mapped = (result: IteratorResult<T>): IteratorResult<U, void> | Promise<IteratorResult<U, void>> => {
    if (result.done) return result as IteratorResult<U, void>;
    let value: U | PromiseLike<U>;
    try {
      value = map(result.value);
    } catch (error) {
      return abandon(error);
    }
    if (!isPromiseLike(value)) return { value, done: false };
    return Promise.resolve(value).then((settled) => ({ value: settled, done: false }), abandon);
  };

  const mappedIterator = {
    next: () => iterator.next().then(mapped),
    return: () =>
      typeof iterator.return === 'function'
        ? iterator.return().then(mapped)
        : Promise.resolve<IteratorResult<U, void>>({ value: undefined, done: true }),
    throw: (error: unknown) =>
      typeof iterator.throw === 'function' ? iterator.throw(error).then(mapped) : abandon(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return mappedIterator as unknown as AsyncGenerator<U, void, void>;
}
