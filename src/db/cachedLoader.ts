/**
 * One loader of a request (loaders.ts): a DataLoader over a LoaderCache (loaderCache.ts), read two
 * ways through that one cache: `load`, one key at a time, batched per tick (graphql-js's
 * resolvers), and `readAll`, every key of a round at once with one promise for the round (the
 * planned executor's). Both send the same requests and see what the other read. And `eachKey`,
 * the fetch of a loader whose keys are read one request each (a Query per key).
 */
import DataLoader from 'dataloader';
import { asPromise, mapped, settle } from './continuation.js';
import type { Continuation } from './continuation.js';
import { LoaderCache } from './loaderCache.js';
import type { Fetch } from './loaderCache.js';

/** A DataLoader over its own cache: `load` for graphql-js's resolvers, `readAll` for a round of the planned executor. */
export class CachedLoader<K, V> extends DataLoader<K, V, string> {
  readonly cache: LoaderCache<V>;
  readonly #fetch: Fetch<K, V>;
  readonly #idOf: (key: K) => string;

  constructor(fetch: Fetch<K, V>, idOf: (key: K) => string) {
    const cache = new LoaderCache<V>();
    super((keys) => fetch(keys, asPromise()), { cacheKeyFn: idOf, cacheMap: cache });
    this.cache = cache;
    this.#fetch = fetch;
    this.#idOf = idOf;
  }

  /**
   * The values of `keys` in key order, handed to `then`: now when all are known, else within
   * the round's one promise (loaderCache.ts).
   */
  readAll<R>(keys: readonly K[], then: Continuation<V[], R>): R | Promise<R> {
    return this.cache.readAll(keys, this.#idOf, this.#fetch, then);
  }
}

/** A read of one key that hands its value (or its failure) to `then` within its own last `then`. */
export type ReadOne<K, V> = <R>(key: K, then: Continuation<V, R>) => Promise<R>;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
const same = <T>(value: T): T => value;

/**
 * Reads each key on its own (a Query per key): one key costs its read's promise and nothing
 * more. A key that fails (a refused cursor or filter) fails alone: among several, its value is
 * its error, which DataLoader hands to that key's loads only (not the first failure to every key
 * of the batch, which would give a field another field's error).
 */
export function eachKey<K, V>(read: ReadOne<K, V>): Fetch<K, V> {
  const readOne = <R>(key: K, then: Continuation<V, R>): Promise<R> => {
    try {
      return read(key, then);
    } catch (error) {
      return Promise.resolve().then(() => then.failed(error));
    }
  };
  return (keys, then) =>
    keys.length === 1
      ? readOne(
          keys[0] as K,
          mapped(then, (value: V) => [value]),
        )
      : Promise.all(keys.map((key) => readOne<V | Error>(key, { done: same, failed: asError }))).then(
          (values) => settle(then, () => values as V[]),
          then.failed,
        );
}
