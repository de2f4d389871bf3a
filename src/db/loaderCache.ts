/**
 * A per-request loader's cache that two executors share. graphql-js reads through the
 * DataLoader (one promise per `load`, batched per tick); the planned executor reads a whole
 * round of keys at once (`readAll`) and needs what is already known without a promise per key.
 * So the cache keeps settled values as values: DataLoader, its `cacheMap`, gets a promise made
 * the first time it asks for one; the planned executor reads the value itself.
 *
 * An entry is one of: a value (read, or put by a write or a page that held the item); a promise
 * DataLoader made (a load in flight, or settled but not yet seen here); or a key of a batch the
 * planned executor has in flight, whose promise is made only if DataLoader asks for it.
 */
type Fetch<K, V> = (keys: readonly K[]) => Promise<readonly V[]>;

export class LoaderCache<V> {
  private readonly values = new Map<string, V>();
  private readonly promises = new Map<string, Promise<V>>();
  /** Keys of the planned executor's reads in flight (the batch is unset while its call is being made). */
  private readonly batches = new Map<string, { batch: Promise<readonly V[]> | undefined; index: number }>();

  /** DataLoader's CacheMap: the promise of `id`, made from a value or a batch when first asked for. */
  get(id: string): Promise<V> | undefined {
    const promise = this.promises.get(id);
    if (promise) return promise;
    let made: Promise<V>;
    if (this.values.has(id)) made = Promise.resolve(this.values.get(id) as V);
    else {
      const entry = this.batches.get(id);
      if (!entry?.batch) return undefined;
      made = entry.batch.then((values) => values[entry.index] as V);
    }
    this.promises.set(id, made);
    return made;
  }

  /** DataLoader's CacheMap: a load it started (or a promise primed into it). */
  set(id: string, promise: Promise<V>): void {
    this.values.delete(id);
    this.batches.delete(id);
    this.promises.set(id, promise);
  }

  delete(id: string): void {
    this.values.delete(id);
    this.promises.delete(id);
    this.batches.delete(id);
  }

  clear(): void {
    this.values.clear();
    this.promises.clear();
    this.batches.clear();
  }

  /** Whether `id` has an entry of any kind (DataLoader's `prime` leaves such a key alone). */
  has(id: string): boolean {
    return this.values.has(id) || this.promises.has(id) || this.batches.has(id);
  }

  /** Puts `value` in place of `promise`, its own read, unless another entry took that place meanwhile. */
  settle(id: string, promise: Promise<V>, value: V): void {
    if (this.promises.get(id) === promise) this.put(id, value);
  }

  /** Puts the value of `id` (a write's result, an item a page or a read returned), replacing any entry. */
  put(id: string, value: V): void {
    this.promises.delete(id);
    this.batches.delete(id);
    this.values.set(id, value);
  }

  /**
   * The values of `keys` in key order, reading the ones nobody has read or is reading with
   * one call of `fetch` (their ids deduplicated). Synchronous when every value is known; otherwise
   * one promise for the whole set, which waits for reads in flight too. A failed fetch forgets
   * its keys, as DataLoader does, so a later read tries again.
   */
  readAll<K>(keys: readonly K[], idOf: (key: K) => string, fetch: Fetch<K, V>): V[] | Promise<V[]> {
    const ids = keys.map(idOf);
    let missing: K[] | undefined;
    let missingIds: string[] | undefined;
    let waiting: [string, Promise<V>][] | undefined;
    let others: Promise<unknown>[] | undefined;
    for (let i = 0; i < ids.length; i += 1) {
      const id = ids[i] as string;
      if (this.values.has(id)) continue;
      const promise = this.promises.get(id);
      if (promise) {
        (waiting ??= []).push([id, promise]);
        continue;
      }
      const entry = this.batches.get(id);
      if (entry) {
        // A duplicate of a key this call reads (its batch is set below), or a batch another read has in flight.
        if (entry.batch !== undefined && !(others ??= []).includes(entry.batch)) others.push(entry.batch);
        continue;
      }
      (missing ??= []).push(keys[i] as K);
      (missingIds ??= []).push(id);
      // Known to be in flight from here on (the batch is set below, in the same turn).
      this.batches.set(id, { batch: undefined, index: missingIds.length - 1 });
    }
    const valuesOf = (): V[] => ids.map((id) => this.values.get(id) as V);
    if (!missing && !waiting && !others) return valuesOf();
    let batch: Promise<unknown> | undefined;
    if (missing && missingIds) {
      const fetchIds = missingIds;
      let fetched: Promise<readonly V[]>;
      try {
        fetched = fetch(missing);
      } catch (error) {
        for (const id of fetchIds) this.batches.delete(id);
        throw error;
      }
      for (const id of fetchIds) {
        const entry = this.batches.get(id);
        if (entry) entry.batch = fetched;
      }
      batch = fetched.then(
        (values) => {
          fetchIds.forEach((id, index) => {
            // Unless something newer (a write's put) took the entry's place meanwhile.
            if (this.batches.get(id)?.batch === fetched) this.put(id, values[index] as V);
          });
        },
        (error: unknown) => {
          for (const id of fetchIds) if (this.batches.get(id)?.batch === fetched) this.batches.delete(id);
          throw error;
        },
      );
    }
    if (!waiting && !others && batch) return batch.then(valuesOf);
    const all: Promise<unknown>[] = [...(batch ? [batch] : []), ...(others ?? [])];
    for (const [id, promise] of waiting ?? []) {
      all.push(
        promise.then((value) => {
          if (this.promises.get(id) === promise) this.values.set(id, value);
        }),
      );
    }
    return Promise.all(all).then(() => this.readAll(keys, idOf, fetch));
  }
}
