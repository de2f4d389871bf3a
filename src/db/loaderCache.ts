import { asPromise, mapped, settle } from './continuation.js';
import type { Continuation } from './continuation.js';

/**
 * A per-request loader's cache that two executors share. graphql-js reads through the
 * DataLoader (one promise per `load`, batched per tick); the planned executor reads a whole
 * round of keys at once (`readAll`) and needs what is already known without a promise per key.
 * So the cache keeps settled values as values: DataLoader, through its `cacheMap`, gets a promise
 * made the first time it asks for one, and the planned executor reads the value itself.
 *
 * An entry is a value (read, or put by a write or by a page that held the item), a promise
 * DataLoader made (a load in flight, or a promise primed into it), or a share of a read in flight
 * that serves several loaders at once (the item collection's, `expect`), whose promise is made
 * only if DataLoader asks for it.
 */

/**
 * Reads `keys` (each once) and hands their values, in key order, or its failure, to `then`
 * within the read's last `then` (continuation.ts).
 */
export type Fetch<K, V> = <R>(keys: readonly K[], then: Continuation<V[], R>) => Promise<R>;

export class LoaderCache<V> {
  private readonly values = new Map<string, V>();
  private readonly promises = new Map<string, Promise<V>>();
  private readonly shares = new Map<string, { read: Promise<unknown>; pick: (found: unknown) => V }>();

  /** DataLoader's CacheMap: the promise of `id`, made from its value or its share of a read when first asked for. */
  get(id: string): Promise<V> | undefined {
    const promise = this.promises.get(id);
    if (promise) return promise;
    let made: Promise<V>;
    if (this.values.has(id)) made = Promise.resolve(this.values.get(id) as V);
    else {
      const share = this.shares.get(id);
      if (!share) return undefined;
      made = share.read.then(share.pick);
    }
    this.promises.set(id, made);
    return made;
  }

  /** DataLoader's CacheMap: a load it started (or a promise primed into it). */
  set(id: string, promise: Promise<V>): void {
    this.delete(id);
    this.promises.set(id, promise);
  }

  delete(id: string): void {
    this.values.delete(id);
    this.promises.delete(id);
    this.shares.delete(id);
  }

  clear(): void {
    this.values.clear();
    this.promises.clear();
    this.shares.clear();
  }

  /** Whether `id` has an entry of any kind (DataLoader's `prime` leaves such a key alone). */
  has(id: string): boolean {
    return this.values.has(id) || this.promises.has(id) || this.shares.has(id);
  }

  /** Puts the value of `id` (a write's result, an item a page or a read returned), replacing any entry. */
  put(id: string, value: V): void {
    this.promises.delete(id);
    this.shares.delete(id);
    this.values.set(id, value);
  }

  /**
   * The value of `id` comes from `read`, a read of several loaders' keys at once, as `pick`
   * finds it there; unless `id` has an entry already (as DataLoader's `prime` would). Whoever
   * made the read puts the value (`settleShare`) once it is there; a failed read stays, and
   * every reader of `id` sees the failure.
   */
  expect<T>(id: string, read: Promise<T>, pick: (found: T) => V): void {
    if (!this.has(id)) this.shares.set(id, { read, pick: pick as (found: unknown) => V });
  }

  /** Puts `value` in place of `id`'s share of `read`, unless another entry took its place meanwhile. */
  settleShare(id: string, read: Promise<unknown>, value: V): void {
    if (this.shares.get(id)?.read === read) this.put(id, value);
  }

  /**
   * Keeps the failure of a read of `id` (a rejected promise, as DataLoader keeps a key's Error),
   * unless another entry took its place meanwhile: graphql-js, when it answers after a planned
   * run whose read failed, sees the same failure without reading again.
   */
  private fail(id: string, error: unknown): void {
    if (this.has(id)) return;
    const failed = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    // Whoever reads the entry sees the failure; nobody else must (no unhandled rejection).
    failed.catch(() => undefined);
    this.promises.set(id, failed);
  }

  /** Puts `value` in place of `promise`, the read it came from, unless another entry took that place meanwhile. */
  settle(id: string, promise: Promise<V>, value: V): void {
    if (this.promises.get(id) === promise) this.put(id, value);
  }

  /**
   * The values of `keys` in key order, handed to `then`: at once when every value is known, else
   * after one call of `fetch` for the keys nobody has read (each once) and after the loads in
   * flight of the others. `then` runs within the fetch's own `then` when nothing else is waited
   * for: a round of reads costs one promise per request.
   */
  readAll<K, R>(
    keys: readonly K[],
    idOf: (key: K) => string,
    fetch: Fetch<K, V>,
    then: Continuation<V[], R>,
  ): R | Promise<R> {
    const ids = keys.map(idOf);
    let missing: K[] | undefined;
    let missingIds: string[] | undefined;
    let asked: Set<string> | undefined;
    let waiting: Promise<unknown>[] | undefined;
    for (let i = 0; i < ids.length; i += 1) {
      const id = ids[i] as string;
      if (this.values.has(id) || asked?.has(id)) continue;
      const promise = this.promises.get(id);
      if (promise) {
        // A load of DataLoader's (a prefetch) in flight or settled: its value, once it has one.
        (waiting ??= []).push(promise.then((value) => this.settle(id, promise, value)));
        continue;
      }
      const share = this.shares.get(id);
      if (share) {
        // Its read's maker puts the value before this waiter runs (it registered first).
        if (!waiting?.includes(share.read)) (waiting ??= []).push(share.read);
        continue;
      }
      (missing ??= []).push(keys[i] as K);
      (missingIds ??= []).push(id);
      (asked ??= new Set()).add(id);
    }
    const values = (): V[] => ids.map((id) => this.values.get(id) as V);
    // A write may forget an entry while it is read (its loaders' forgetTouched): read it again then.
    const answer = (): R | Promise<R> =>
      ids.every((id) => this.values.has(id)) ? settle(then, values) : this.readAll(keys, idOf, fetch, then);
    if (!missing || !missingIds) {
      if (!waiting) return settle(then, values);
      return (waiting.length === 1 ? (waiting[0] as Promise<unknown>) : Promise.all(waiting)).then(answer, then.failed);
    }
    const fetchedIds = missingIds;
    // A key that failed alone (its value an Error, as DataLoader takes it) fails the whole read
    // here. Failures are kept for the rest of the request (`fail`): graphql-js, answering after
    // a planned run that stopped on one, reads nothing again.
    const put = (fetched: readonly V[]): V[] => {
      let failed: Error | undefined;
      fetchedIds.forEach((id, index) => {
        const value = fetched[index] as V;
        if (value instanceof Error) {
          failed ??= value;
          this.fail(id, value);
        } else this.put(id, value);
      });
      if (failed) throw failed;
      return values();
    };
    const kept = <T>(next: Continuation<V[], T>): Continuation<V[], T> => ({
      done: mapped(next, put).done,
      failed: (error) => {
        for (const id of fetchedIds) this.fail(id, error);
        return next.failed(error);
      },
    });
    if (!waiting) return fetch(missing, kept(then));
    return Promise.all([fetch(missing, kept(asPromise<V[]>())), ...waiting]).then(answer, then.failed);
  }
}
