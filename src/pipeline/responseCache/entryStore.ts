/**
 * The cache's entries in this process: an LRU bounded by bytes (lru-cache, each entry sized
 * by its serialized answer, key and tags), every entry aged out at the maximum age, and an index
 * from each dependency tag to the entries filed under it, so an invalidation evicts exactly those.
 *
 * Two guards decide whether a fresh answer may be stored at all:
 * - an answer whose reads began before one of its tags was invalidated may hold the old value
 *   (the write landed while it read), so it is not stored. Invalidation times are kept for
 *   `raceHorizonMs`; an execution that ran longer than that is never stored.
 * - an answer that read a global index (eventually consistent) while one of its index tags was
 *   invalidated less than `holdDownMs` ago may come from an index that does not show the change
 *   yet. It is stored, but only until that hold-down ends (its own TTL), so rows from a lagging
 *   index live no longer than the hold-down; the next read after it goes to the index again.
 */
import { LRUCache } from 'lru-cache';
import { isIndexTag } from '../../table/dependencies.js';

export interface CacheEntry {
  /** The answer's `data`, shared by every hit (never mutated). */
  data: unknown;
  /** Bytes of the answer's JSON (what the size bound counts). */
  bytes: number;
  tags: readonly string[];
  public: boolean;
  /** A weak ETag of the answer's data: the same for the miss that stored it and every hit. */
  etag: string;
  /** performance.now() when stored. */
  storedAt: number;
}

export interface EntryStoreOptions {
  maxBytes: number;
  maxAgeMs: number;
  holdDownMs: number;
  raceHorizonMs?: number;
  /** Tags whose invalidation time is remembered at most; past it the store flushes instead. */
  maxRememberedTags?: number;
  onEvicted?: (count: number) => void;
  /** The clock of entries' ages (tests); performance.now() by default. */
  clock?: { now: () => number };
}

/** Bytes an entry costs beyond its answer: the key, the LRU's and the tag index's bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 256;
const TAG_OVERHEAD_BYTES = 64;

export type StoreRefusal = 'too-large' | 'changed-while-read' | 'read-too-long';

export class EntryStore {
  private readonly lru: LRUCache<string, CacheEntry>;
  private readonly byTag = new Map<string, Set<string>>();
  /** Tag -> performance.now() of its last invalidation, oldest first (re-inserted on update). */
  private readonly invalidatedAt = new Map<string, number>();
  private flushedAt = -Infinity;
  private readonly raceHorizonMs: number;
  private readonly maxRememberedTags: number;

  constructor(private readonly options: EntryStoreOptions) {
    this.raceHorizonMs = Math.max(options.raceHorizonMs ?? 10_000, options.holdDownMs);
    this.maxRememberedTags = options.maxRememberedTags ?? 100_000;
    this.lru = new LRUCache<string, CacheEntry>({
      maxSize: options.maxBytes,
      // One answer may take a tenth of the cache at most: a single huge page must not flush the rest.
      maxEntrySize: Math.max(1, Math.floor(options.maxBytes / 10)),
      sizeCalculation: (entry, key) =>
        entry.bytes +
        key.length +
        ENTRY_OVERHEAD_BYTES +
        entry.tags.reduce((n, t) => n + t.length + TAG_OVERHEAD_BYTES, 0),
      ttl: options.maxAgeMs,
      ...(options.clock ? { perf: options.clock, ttlResolution: 0 } : {}),
      dispose: (entry, key) => this.unindex(key, entry),
    });
  }

  get(key: string): CacheEntry | undefined {
    return this.lru.get(key);
  }

  /**
   * Stores `entry` unless a guard refuses it (the reason is returned). `readStartedAt` is
   * performance.now() when the execution that produced it began; `readIndex`, whether it read
   * a global index.
   */
  set(key: string, entry: CacheEntry, readStartedAt: number, readIndex: boolean): StoreRefusal | undefined {
    const now = entry.storedAt;
    if (now - readStartedAt > this.raceHorizonMs) return 'read-too-long';
    if (readStartedAt <= this.flushedAt) return 'changed-while-read';
    let heldUntil = Infinity;
    for (const tag of entry.tags) {
      const at = this.invalidatedAt.get(tag);
      if (at === undefined) continue;
      if (at >= readStartedAt) return 'changed-while-read';
      if (readIndex && isIndexTag(tag)) heldUntil = Math.min(heldUntil, at + this.options.holdDownMs);
    }
    this.lru.delete(key);
    // Read from an index that may lag the change: kept only until the hold-down ends.
    if (heldUntil > now) this.lru.set(key, entry, { ttl: Math.ceil(heldUntil - now) });
    else this.lru.set(key, entry);
    if (!this.lru.has(key)) return 'too-large';
    this.index(key, entry);
    return undefined;
  }

  /**
   * Stores an entry already checked elsewhere (a valid entry of the shared tier) for at most
   * `ttlMs`; invalidations from now on evict it like any other.
   */
  adopt(key: string, entry: CacheEntry, ttlMs: number): void {
    this.lru.delete(key);
    this.lru.set(key, entry, { ttl: Math.max(1, Math.min(ttlMs, this.options.maxAgeMs)) });
    if (this.lru.has(key)) this.index(key, entry);
  }

  /** Evicts every entry filed under one of `tags`; later stores of reads begun before now are refused. */
  invalidate(tags: Iterable<string>, now = performance.now()): number {
    let evicted = 0;
    for (const tag of tags) {
      this.invalidatedAt.delete(tag);
      this.invalidatedAt.set(tag, now);
      const keys = this.byTag.get(tag);
      if (!keys) continue;
      for (const key of [...keys]) if (this.lru.delete(key)) evicted++;
    }
    this.forgetOldInvalidations(now);
    if (evicted > 0) this.options.onEvicted?.(evicted);
    return evicted;
  }

  /** Evicts everything (the invalidation feed had a gap); reads begun before now are not stored. */
  flush(now = performance.now()): void {
    const evicted = this.lru.size;
    this.lru.clear();
    this.byTag.clear();
    this.invalidatedAt.clear();
    this.flushedAt = now;
    if (evicted > 0) this.options.onEvicted?.(evicted);
  }

  get size(): number {
    return this.lru.size;
  }

  /** Bytes the entries take, as the bound counts them. */
  get bytes(): number {
    return this.lru.calculatedSize;
  }

  private index(key: string, entry: CacheEntry): void {
    for (const tag of entry.tags) {
      let keys = this.byTag.get(tag);
      if (!keys) this.byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, entry: CacheEntry): void {
    for (const tag of entry.tags) {
      const keys = this.byTag.get(tag);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) this.byTag.delete(tag);
    }
  }

  private forgetOldInvalidations(now: number): void {
    for (const [tag, at] of this.invalidatedAt) {
      if (now - at <= this.raceHorizonMs) break;
      this.invalidatedAt.delete(tag);
    }
    // A flood of distinct tags: forgetting one would let a racing read store an old value.
    if (this.invalidatedAt.size > this.maxRememberedTags) this.flush(now);
  }
}
