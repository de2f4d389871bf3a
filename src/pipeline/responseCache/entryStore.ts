/**
 * The cache's entries in this process: an LRU bounded by bytes (lru-cache), an index from each
 * dependency tag to the entries filed under it, so an invalidation evicts exactly those, and the
 * maximum age, which holds for every entry whatever else happens: an entry's age counts from the
 * moment the execution that produced it began (its data is at least that old), and `get` never
 * returns one older than `maxAgeMs`.
 *
 * An entry holds its answer as JSON text, not as objects: what the bound counts is then what the
 * heap holds (a parsed answer takes several times its JSON), and a hit is parsed once for the
 * response (which reuses the text instead of serializing the answer again). The bound counts the
 * text's bytes in the heap (twice its length when it is not all ASCII), the key, the tags, and
 * a fixed cost per entry and per tag for the LRU's, the index's and the entry's own objects,
 * measured under a flood (`npm run bench:cache-memory`), and the compressed bodies its hits keep.
 *
 * Two guards decide whether a fresh answer may be stored at all:
 * - an answer whose reads began before one of its tags (or that tag's kind) was invalidated may
 *   hold the old value (the write landed while it read), so it is not stored. Invalidation
 *   times are kept for `raceHorizonMs`; an execution that ran longer than that is never stored.
 * - an answer that read a global index (eventually consistent) while one of its index tags was
 *   invalidated less than `holdDownMs` ago may come from an index that does not show the change
 *   yet. It is stored, but only until that hold-down ends (its own TTL), so rows from a lagging
 *   index live no longer than the hold-down; the next read after it goes to the index again.
 */
import { LRUCache } from 'lru-cache';
import { kindOf } from '../../events/invalidationMessages.js';
import { isIndexTag } from '../../table/dependencies.js';

export interface CacheEntry {
  /** The answer's `data` as JSON. */
  json: string;
  tags: readonly string[];
  public: boolean;
  /** A weak ETag of the answer's data: the same for the miss that stored it and every hit. */
  etag: string;
  /** performance.now() when the execution that produced it began: its age counts from there. */
  readAt: number;
  /**
   * Bodies of its hits as a transport compressed them, by what they are (the cost extension they
   * carry and the encoding): a later hit writes these bytes instead of compressing again (`keep`).
   */
  encoded?: Map<string, Buffer>;
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

/**
 * Heap bytes an entry costs beyond its text, key and tags: the entry object, the LRU's slots,
 * the key's place in the tag index. Measured with `npm run bench:cache-memory` (docs/caching.md).
 */
export const ENTRY_OVERHEAD_BYTES = 512;
/** Heap bytes per tag beyond its text: the array slot, the string's header, its place in the index's set. */
export const TAG_OVERHEAD_BYTES = 112;

/** Heap bytes per compressed body beyond its bytes: the Buffer object and its slot in the entry's map. */
export const ENCODED_OVERHEAD_BYTES = 160;

/** Heap bytes of a string: one byte a character when it is all ASCII (a one-byte string), else two. */
const heapBytesOf = (text: string): number => (Buffer.byteLength(text) === text.length ? text.length : 2 * text.length);

/** The bytes the bound counts for `entry` under `key`. */
export function entrySize(entry: CacheEntry, key: string): number {
  let size = ENTRY_OVERHEAD_BYTES + heapBytesOf(entry.json) + heapBytesOf(key) + entry.etag.length;
  for (const tag of entry.tags) size += heapBytesOf(tag) + TAG_OVERHEAD_BYTES;
  for (const [label, bytes] of entry.encoded ?? []) size += ENCODED_OVERHEAD_BYTES + label.length + bytes.length;
  return size;
}

export type StoreRefusal = 'too-large' | 'changed-while-read' | 'read-too-long' | 'too-old';

export class EntryStore {
  private readonly lru: LRUCache<string, CacheEntry>;
  /** Tag -> the key filed under it, or the keys when there are several (most tags name one entry: a Set each would cost more than the entry). */
  private readonly byTag = new Map<string, string | Set<string>>();
  /** Tag -> clock time of its last invalidation, oldest first (re-inserted on update). */
  private readonly invalidatedAt = new Map<string, number>();
  /** Kind -> clock time of its last invalidation as a whole. */
  private readonly kindInvalidatedAt = new Map<string, number>();
  private flushedAt = -Infinity;
  private readonly raceHorizonMs: number;
  private readonly maxRememberedTags: number;
  private readonly clock: { now: () => number };

  constructor(private readonly options: EntryStoreOptions) {
    this.raceHorizonMs = Math.max(options.raceHorizonMs ?? 10_000, options.holdDownMs);
    this.maxRememberedTags = options.maxRememberedTags ?? 100_000;
    this.clock = options.clock ?? performance;
    this.lru = new LRUCache<string, CacheEntry>({
      maxSize: options.maxBytes,
      // One answer may take a tenth of the cache at most: a single huge page must not flush the rest.
      maxEntrySize: Math.max(1, Math.floor(options.maxBytes / 10)),
      sizeCalculation: entrySize,
      // The TTL frees memory; get() enforces the maximum age itself, to the millisecond.
      ttl: options.maxAgeMs,
      perf: this.clock,
      ttlResolution: 0,
      dispose: (entry, key) => this.unindex(key, entry),
    });
  }

  /** The entry at `key`, unless it is older than the maximum age at `now`. */
  get(key: string, now = this.clock.now()): CacheEntry | undefined {
    const entry = this.lru.get(key);
    if (!entry) return undefined;
    if (now - entry.readAt > this.options.maxAgeMs) {
      this.lru.delete(key);
      return undefined;
    }
    return entry;
  }

  /**
   * Stores `entry` unless a guard refuses it (the reason is returned); `readIndex`: whether its
   * execution read a global index.
   */
  set(key: string, entry: CacheEntry, readIndex: boolean): StoreRefusal | undefined {
    const now = this.clock.now();
    const { readAt } = entry;
    if (now - readAt > this.raceHorizonMs) return 'read-too-long';
    if (readAt <= this.flushedAt) return 'changed-while-read';
    let until = readAt + this.options.maxAgeMs;
    for (const tag of entry.tags) {
      const at = this.invalidatedAt.get(tag);
      const kindAt = this.kindInvalidatedAt.get(kindOf(tag));
      if ((at !== undefined && at >= readAt) || (kindAt !== undefined && kindAt >= readAt)) return 'changed-while-read';
      // Read from an index that may lag the change: kept only until the hold-down ends.
      const heldUntil = at === undefined ? -Infinity : at + this.options.holdDownMs;
      if (readIndex && heldUntil > now && isIndexTag(tag)) until = Math.min(until, heldUntil);
    }
    if (until <= now) return 'too-old';
    this.lru.delete(key);
    this.lru.set(key, entry, { ttl: Math.ceil(until - now) });
    if (!this.lru.has(key)) return 'too-large';
    this.index(key, entry);
    return undefined;
  }

  /**
   * Stores an entry already checked elsewhere (a valid entry of the shared tier) for at most
   * `ttlMs` and never past its maximum age; invalidations from now on evict it like any other.
   */
  adopt(key: string, entry: CacheEntry, ttlMs: number): void {
    const ttl = Math.min(ttlMs, entry.readAt + this.options.maxAgeMs - this.clock.now());
    if (!(ttl >= 1)) return;
    this.lru.delete(key);
    this.lru.set(key, entry, { ttl: Math.floor(ttl) });
    if (this.lru.has(key)) this.index(key, entry);
  }

  /**
   * Keeps `bytes` (a compressed body of a hit) with `entry` under `label`, and counts them in its
   * size, if `entry` is still the one held at `key`; an entry that no longer fits is evicted.
   */
  keep(key: string, entry: CacheEntry, label: string, bytes: Buffer): void {
    if (this.lru.peek(key) !== entry) return;
    const ttl = this.lru.getRemainingTTL(key);
    if (!(ttl > 0)) return;
    (entry.encoded ??= new Map()).set(label, bytes);
    // The same value again: lru-cache counts its size anew and keeps its place and deadline.
    this.lru.set(key, entry, { ttl: Math.ceil(ttl) });
  }

  /** Evicts every entry filed under one of `tags`; later stores of reads begun before now are refused. */
  invalidate(tags: Iterable<string>, now = this.clock.now()): number {
    let evicted = 0;
    for (const tag of tags) {
      this.invalidatedAt.delete(tag);
      this.invalidatedAt.set(tag, now);
      const keys = this.byTag.get(tag);
      if (keys === undefined) continue;
      for (const key of typeof keys === 'string' ? [keys] : [...keys]) if (this.lru.delete(key)) evicted++;
    }
    this.forgetOldInvalidations(now);
    if (evicted > 0) this.options.onEvicted?.(evicted);
    return evicted;
  }

  /**
   * Evicts every entry filed under a tag of one of `kinds` (a tag the bus could not take as it
   * was widens to its kind); later stores of reads begun before now under such a tag are refused.
   */
  invalidateKinds(kinds: Iterable<string>, now = this.clock.now()): number {
    const wanted = new Set(kinds);
    if (wanted.size === 0) return 0;
    for (const kind of wanted) this.kindInvalidatedAt.set(kind, now);
    const tags = [...this.byTag.keys()].filter((tag) => wanted.has(kindOf(tag)));
    return this.invalidate(tags, now);
  }

  /** Evicts everything (the invalidation feed had a gap); reads begun before now are not stored. */
  flush(now = this.clock.now()): void {
    const evicted = this.lru.size;
    this.lru.clear();
    this.byTag.clear();
    this.invalidatedAt.clear();
    this.kindInvalidatedAt.clear();
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
      const keys = this.byTag.get(tag);
      if (keys === undefined || keys === key) this.byTag.set(tag, key);
      else if (typeof keys === 'string') this.byTag.set(tag, new Set([keys, key]));
      else keys.add(key);
    }
  }

  private unindex(key: string, entry: CacheEntry): void {
    for (const tag of entry.tags) {
      const keys = this.byTag.get(tag);
      if (keys === key) this.byTag.delete(tag);
      else if (typeof keys === 'object') {
        keys.delete(key);
        if (keys.size === 1) this.byTag.set(tag, keys.values().next().value as string);
      }
    }
  }

  private forgetOldInvalidations(now: number): void {
    for (const [tag, at] of this.invalidatedAt) {
      if (now - at <= this.raceHorizonMs) break;
      this.invalidatedAt.delete(tag);
    }
    for (const [kind, at] of this.kindInvalidatedAt)
      if (now - at > this.raceHorizonMs) this.kindInvalidatedAt.delete(kind);
    // A flood of distinct tags: forgetting one would let a racing read store an old value.
    if (this.invalidatedAt.size > this.maxRememberedTags) this.flush(now);
  }
}
