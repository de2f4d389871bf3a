import { describe, expect, it } from 'vitest';
import { cacheKeyOf, canonicalJson, scopeOf } from '../../src/pipeline/responseCache/cacheKey.js';
import { EntryStore } from '../../src/pipeline/responseCache/entryStore.js';
import type { CacheEntry } from '../../src/pipeline/responseCache/entryStore.js';
import { InvalidationFeed } from '../../src/pipeline/responseCache/invalidationFeed.js';
import { decodeEntry, encodeEntry, isCurrent } from '../../src/pipeline/responseCache/sharedTier.js';

const anEntry = (tags: string[], storedAt: number, overrides: Partial<CacheEntry> = {}): CacheEntry => ({
  data: { ok: true },
  bytes: 100,
  tags,
  public: true,
  etag: 'W/"x"',
  storedAt,
  ...overrides,
});

const aStore = (overrides: Partial<ConstructorParameters<typeof EntryStore>[0]> = {}) =>
  new EntryStore({ maxBytes: 1_000_000, maxAgeMs: 60_000, holdDownMs: 500, ...overrides });

describe('cache keys', () => {
  it('ignore the key order of variables, at any depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [2, { x: 0, y: 1 }] }, b: 1 }),
    );
    expect(cacheKeyOf('h', 'Op', { a: 1, b: 2 }, 'public')).toBe(cacheKeyOf('h', 'Op', { b: 2, a: 1 }, 'public'));
  });

  it.each([
    ['a value', ['h', 'Op', { a: 2 }, 'public']],
    ['a type', ['h', 'Op', { a: '1' }, 'public']],
    ['the operation', ['h', 'Other', { a: 1 }, 'public']],
    ['the document', ['g', 'Op', { a: 1 }, 'public']],
    ['the scope', ['h', 'Op', { a: 1 }, 'anonymous']],
  ] as const)('differ in %s', (_, [hash, name, variables, scope]) => {
    expect(cacheKeyOf(hash, name, variables, scope)).not.toBe(cacheKeyOf('h', 'Op', { a: 1 }, 'public'));
  });

  it('scope a private answer by viewer and role', () => {
    expect(scopeOf(false, { userId: 'u1', role: 'customer' })).not.toBe(
      scopeOf(false, { userId: 'u1', role: 'admin' }),
    );
    expect(scopeOf(false, { userId: 'u1', role: 'customer' })).not.toBe(
      scopeOf(false, { userId: 'u2', role: 'customer' }),
    );
    expect(scopeOf(false, null)).toBe('anonymous');
    expect(scopeOf(true, { userId: 'u1', role: 'admin' })).toBe('public');
  });
});

describe('EntryStore', () => {
  it('evicts exactly the entries filed under an invalidated tag', () => {
    const store = aStore();
    store.set('a', anEntry(['product:1', 'category:x'], 10), 5, false);
    store.set('b', anEntry(['product:2'], 10), 5, false);
    expect(store.invalidate(['product:1'], 20)).toBe(1);
    expect(store.get('a')).toBeUndefined();
    expect(store.get('b')).toBeDefined();
  });

  it('refuses an answer whose read began before one of its tags was invalidated (the write raced the read)', () => {
    const store = aStore();
    store.invalidate(['product:1'], 100);
    expect(store.set('a', anEntry(['product:1'], 120), 90, false)).toBe('changed-while-read');
    expect(store.set('a', anEntry(['product:1'], 120), 110, false)).toBeUndefined();
  });

  it('keeps an answer read from a global index right after a change of that index range only until the hold-down ends', () => {
    const clock = { now: () => 300 };
    const store = aStore({ holdDownMs: 500, clock });
    store.invalidate(['category:x'], 100);
    expect(store.set('a', anEntry(['category:x'], 300), 200, true)).toBeUndefined();
    // The same tag on a table read (consistent) is kept for the maximum age.
    expect(store.set('b', anEntry(['category:x'], 300), 200, false)).toBeUndefined();
    clock.now = () => 599;
    expect(store.get('a')).toBeDefined();
    clock.now = () => 601;
    expect(store.get('a')).toBeUndefined();
    expect(store.get('b')).toBeDefined();
    // Read after the hold-down: the maximum age again.
    expect(store.set('c', anEntry(['category:x'], 700), 650, true)).toBeUndefined();
    clock.now = () => 50_000;
    expect(store.get('c')).toBeDefined();
  });

  it('restarts the hold-down of an index range changed again while it ran', () => {
    const clock = { now: () => 450 };
    const store = aStore({ holdDownMs: 500, clock });
    store.invalidate(['category:x', 'product:1'], 100);
    store.invalidate(['category:x'], 400);
    expect(store.set('a', anEntry(['category:x', 'product:1'], 450), 410, true)).toBeUndefined();
    clock.now = () => 850;
    expect(store.get('a')).toBeDefined();
    clock.now = () => 901;
    expect(store.get('a')).toBeUndefined();
  });

  it('refuses what a flush may have missed, and answers of executions longer than it remembers', () => {
    const store = aStore({ raceHorizonMs: 1000 });
    store.flush(100);
    expect(store.set('a', anEntry(['product:1'], 150), 50, false)).toBe('changed-while-read');
    expect(store.set('a', anEntry(['product:1'], 5000), 150, false)).toBe('read-too-long');
  });

  it('stays within its byte bound under a flood of distinct entries', () => {
    const maxBytes = 200_000;
    const store = aStore({ maxBytes });
    for (let i = 0; i < 10_000; i++) store.set(`k${i}`, anEntry([`product:${i}`, 'category:x'], 10), 5, false);
    expect(store.bytes).toBeLessThanOrEqual(maxBytes);
    expect(store.size).toBeGreaterThan(100);
    expect(store.get('k9999')).toBeDefined();
    expect(store.get('k0')).toBeUndefined();
    // Evicted entries left the tag index too: invalidating the shared tag finds only those still held.
    const held = store.size;
    expect(store.invalidate(['category:x'], 20)).toBe(held);
    expect(store.size).toBe(0);
  });

  it('does not store one answer larger than a tenth of the cache', () => {
    const store = aStore({ maxBytes: 10_000 });
    expect(store.set('a', anEntry(['product:1'], 10, { bytes: 5000 }), 5, false)).toBe('too-large');
  });

  it('flushes instead of forgetting invalidations when too many distinct tags change at once', () => {
    const store = aStore({ maxRememberedTags: 10 });
    store.set('a', anEntry(['product:keep'], 10), 5, false);
    store.invalidate(
      Array.from({ length: 11 }, (_, i) => `product:${i}`),
      20,
    );
    expect(store.get('a')).toBeUndefined();
  });
});

describe('InvalidationFeed', () => {
  it('is live only while beats keep coming, and a beat after a dead spell reports the gap', () => {
    let now = 0;
    let gaps = 0;
    const feed = new InvalidationFeed({ timeoutMs: 5000, now: () => now, onGap: () => gaps++ });
    expect(feed.live).toBe(false);
    feed.beat();
    expect(gaps).toBe(1);
    now = 4000;
    expect(feed.live).toBe(true);
    feed.beat();
    expect(gaps).toBe(1);
    now = 9001;
    expect(feed.live).toBe(false);
    feed.beat();
    expect(gaps).toBe(2);
    feed.down();
    expect(feed.live).toBe(false);
  });
});

describe('shared tier entries', () => {
  const entry = { json: '{"a":"x\\ny"}', etag: 'W/"e"', tags: ['product:1', 'category:x'], public: true };

  it('round-trip with their tags, read mark, scope flag and ETag, whatever the answer holds', () => {
    expect(decodeEntry(encodeEntry(entry, { seq: 7, at: 1234 }))).toEqual({ ...entry, mark: { seq: 7, at: 1234 } });
    expect(decodeEntry('not an entry')).toBeUndefined();
  });

  it('are current only while every tag exists, unchanged since the read began', () => {
    const mark = { seq: 7, at: 0 };
    expect(isCurrent(mark, ['3:100', '7:200'])).toBe(true);
    expect(isCurrent(mark, ['3:100', '8:200'])).toBe(false);
    // A missing tag key (expired or evicted) may have hidden a change.
    expect(isCurrent(mark, ['3:100', ''])).toBe(false);
  });
});
