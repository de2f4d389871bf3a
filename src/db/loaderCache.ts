/**
 * A per-request loader's cache that two executors share. graphql-js reads through the
 * DataLoader (one promise per `load`, batched per tick); the planned executor reads a whole
 * round of keys at once (`readAll`) and needs what is already known without a promise per key.
 * So the cache keeps settled values as values: DataLoader, through its `cacheMap`, gets a promise
 * made the first time it asks for one, and the planned executor reads the value itself.
 *
 * An entry is a value (read, or put by a write or by a page that held the item) or a promise
 * DataLoader made (a load in flight, or a promise primed into it).
 */

/** Reads `keys` (each once) and hands their values, in key order, to `finish` within the read's last `then`. */
export type Fetch<K, V> = <R>(keys: readonly K[], finish: (values: V[]) => R) => Promise<R>;

export class LoaderCache<V> {
  private readonly values = new Map<string, V>();
  private readonly promises = new Map<string, Promise<V>>();

  /** DataLoader's CacheMap: the promise of `id`, made from its value when first asked for. */
  get(id: string): Promise<V> | undefined {
    const promise = this.promises.get(id);
    if (promise || !this.values.has(id)) return promise;
    const made = Promise.resolve(this.values.get(id) as V);
    this.promises.set(id, made);
    return made;
  }

  /** DataLoader's CacheMap: a load it started (or a promise primed into it). */
  set(id: string, promise: Promise<V>): void {
    this.values.delete(id);
    this.promises.set(id, promise);
  }

  delete(id: string): void {
    this.values.delete(id);
    this.promises.delete(id);
  }

  clear(): void {
    this.values.clear();
    this.promises.clear();
  }

  /** Whether `id` has an entry of either kind (DataLoader's `prime` leaves such a key alone). */
  has(id: string): boolean {
    return this.values.has(id) || this.promises.has(id);
  }

  /** Puts the value of `id` (a write's result, an item a page or a read returned), replacing any entry. */
  put(id: string, value: V): void {
    this.promises.delete(id);
    this.values.set(id, value);
  }

  /** Puts `value` in place of `promise`, the read it came from, unless another entry took that place meanwhile. */
  settle(id: string, promise: Promise<V>, value: V): void {
    if (this.promises.get(id) === promise) this.put(id, value);
  }

  /**
   * The values of `keys` in key order, handed to `finish`: at once when every value is known,
   * else after one call of `fetch` for the keys nobody has read (each once) and after the loads
   * in flight of the others, in one promise. `finish` runs within the fetch's own `then` when
   * nothing else is waited for: a round of reads costs one promise beyond its requests.
   */
  readAll<K, R>(
    keys: readonly K[],
    idOf: (key: K) => string,
    fetch: Fetch<K, V>,
    finish: (values: V[]) => R,
  ): R | Promise<R> {
    const ids = keys.map(idOf);
    let missing: K[] | undefined;
    let missingIds: string[] | undefined;
    let waiting: Promise<unknown>[] | undefined;
    for (let i = 0; i < ids.length; i += 1) {
      const id = ids[i] as string;
      if (this.values.has(id) || missingIds?.includes(id)) continue;
      const promise = this.promises.get(id);
      if (promise) {
        // A load of DataLoader's (a prefetch) in flight or settled: its value, once it has one.
        (waiting ??= []).push(promise.then((value) => this.settle(id, promise, value)));
        continue;
      }
      (missing ??= []).push(keys[i] as K);
      (missingIds ??= []).push(id);
    }
    // A write may forget an entry while it is read (its loaders' forgetTouched): read it again then.
    const answer = (): R | Promise<R> =>
      ids.every((id) => this.values.has(id))
        ? finish(ids.map((id) => this.values.get(id) as V))
        : this.readAll(keys, idOf, fetch, finish);
    // A key that failed alone (its value an Error, as DataLoader takes it) fails the whole read
    // here, and is not kept: a later read tries it again, as DataLoader's would.
    const putFetched =
      (fetchedIds: readonly string[]) =>
      (values: readonly V[]): void => {
        let failed: Error | undefined;
        fetchedIds.forEach((id, index) => {
          const value = values[index] as V;
          if (value instanceof Error) failed ??= value;
          else this.put(id, value);
        });
        if (failed) throw failed;
      };
    if (!missing || !missingIds) {
      if (!waiting) return answer();
      return (waiting.length === 1 ? (waiting[0] as Promise<unknown>) : Promise.all(waiting)).then(answer);
    }
    const put = putFetched(missingIds);
    if (!waiting)
      return fetch(missing, (values) => {
        put(values);
        return finish(ids.map((id) => this.values.get(id) as V));
      });
    return Promise.all([fetch(missing, put), ...waiting]).then(answer);
  }
}
