import { describe, expect, it } from 'vitest';
import { cacheKeyOf, canonicalJson, scopeOf } from '../../src/pipeline/responseCache/cacheKey.js';
import { EntryStore, entrySize } from '../../src/pipeline/responseCache/entryStore.js';
import type { CacheEntry } from '../../src/pipeline/responseCache/entryStore.js';
import { InvalidationFeed } from '../../src/pipeline/responseCache/invalidationFeed.js';
import { decodeEntry, encodeEntry, isCurrent } from '../../src/pipeline/responseCache/sharedEntry.js';

const anEntry = (tags: string[], readAt: number, overrides: Partial<CacheEntry> = {}): CacheEntry => ({
  json: '{"ok":true}',
  tags,
  public: true,
  etag: 'W/"x"',
  readAt,
  ...overrides,
});
const clockAt = (t: number) => ({ now: () => t });

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
    const store = aStore({ clock: clockAt(10) });
    store.set('a', anEntry(['product:1', 'category:x'], 5), false);
    store.set('b', anEntry(['product:2'], 5), false);
    expect(store.invalidate(['product:1'], 20)).toBe(1);
    expect(store.get('a')).toBeUndefined();
    expect(store.get('b')).toBeDefined();
  });

  it('never serves an entry older than the maximum age, counted from the start of the read that made it', () => {
    const clock = clockAt(1000);
    const store = aStore({ maxAgeMs: 5000, clock });
    expect(store.set('a', anEntry(['product:1'], 400), false)).toBeUndefined();
    clock.now = () => 5400;
    expect(store.get('a')?.readAt).toBe(400);
    clock.now = () => 5401;
    expect(store.get('a')).toBeUndefined();
    // An answer already as old as the maximum age when it comes back is not stored at all.
    expect(store.set('b', anEntry(['product:1'], 401), false)).toBe('too-old');
  });

  it('keeps an entry adopted from the shared tier no longer than its maximum age, whatever TTL it came with', () => {
    const clock = clockAt(10_000);
    const store = aStore({ maxAgeMs: 5000, clock });
    store.adopt('a', anEntry(['product:1'], 9000), 60_000);
    clock.now = () => 14_000;
    expect(store.get('a')).toBeDefined();
    clock.now = () => 14_001;
    expect(store.get('a')).toBeUndefined();
    store.adopt('b', anEntry(['product:1'], 4000), 60_000);
    expect(store.get('b')).toBeUndefined();
  });

  it('refuses an answer whose read began before one of its tags was invalidated (the write raced the read)', () => {
    const store = aStore({ clock: clockAt(120) });
    store.invalidate(['product:1'], 100);
    expect(store.set('a', anEntry(['product:1'], 90), false)).toBe('changed-while-read');
    expect(store.set('a', anEntry(['product:1'], 110), false)).toBeUndefined();
  });

  it('evicts a whole kind of tags, for a tag the bus could only widen, and refuses reads that raced it', () => {
    const store = aStore({ clock: clockAt(50) });
    store.set('a', anEntry(['product:1', 'category:x'], 10), false);
    store.set('b', anEntry(['product:2'], 10), false);
    store.set('c', anEntry(['category:y'], 10), false);
    expect(store.invalidateKinds(['product'], 60)).toBe(2);
    expect([store.get('a'), store.get('b'), store.get('c')].map(Boolean)).toEqual([false, false, true]);
    expect(store.set('d', anEntry(['product:9'], 55), false)).toBe('changed-while-read');
    expect(store.set('d', anEntry(['product:9'], 61), false)).toBeUndefined();
  });

  it('keeps an answer read from a global index right after a change of that index range only until the hold-down ends', () => {
    const clock = clockAt(300);
    const store = aStore({ holdDownMs: 500, clock });
    store.invalidate(['category:x'], 100);
    expect(store.set('a', anEntry(['category:x'], 200), true)).toBeUndefined();
    // The same tag on a table read (consistent) is kept for the maximum age.
    expect(store.set('b', anEntry(['category:x'], 200), false)).toBeUndefined();
    clock.now = () => 599;
    expect(store.get('a')).toBeDefined();
    clock.now = () => 601;
    expect(store.get('a')).toBeUndefined();
    expect(store.get('b')).toBeDefined();
    // Read after the hold-down: the maximum age again.
    clock.now = () => 700;
    expect(store.set('c', anEntry(['category:x'], 650), true)).toBeUndefined();
    clock.now = () => 50_000;
    expect(store.get('c')).toBeDefined();
  });

  it('restarts the hold-down of an index range changed again while it ran', () => {
    const clock = clockAt(450);
    const store = aStore({ holdDownMs: 500, clock });
    store.invalidate(['category:x', 'product:1'], 100);
    store.invalidate(['category:x'], 400);
    expect(store.set('a', anEntry(['category:x', 'product:1'], 410), true)).toBeUndefined();
    clock.now = () => 850;
    expect(store.get('a')).toBeDefined();
    clock.now = () => 901;
    expect(store.get('a')).toBeUndefined();
  });

  it('refuses what a flush may have missed, and answers of executions longer than it remembers', () => {
    const clock = clockAt(150);
    const store = aStore({ raceHorizonMs: 1000, clock });
    store.flush(100);
    expect(store.set('a', anEntry(['product:1'], 50), false)).toBe('changed-while-read');
    clock.now = () => 5000;
    expect(store.set('a', anEntry(['product:1'], 150), false)).toBe('read-too-long');
  });

  it('stays within its byte bound under a flood of distinct entries', () => {
    const maxBytes = 200_000;
    const store = aStore({ maxBytes, clock: clockAt(10) });
    for (let i = 0; i < 10_000; i++) store.set(`k${i}`, anEntry([`product:${i}`, 'category:x'], 5), false);
    expect(store.bytes).toBeLessThanOrEqual(maxBytes);
    expect(store.size).toBeGreaterThan(100);
    expect(store.get('k9999')).toBeDefined();
    expect(store.get('k0')).toBeUndefined();
    // Evicted entries left the tag index too: invalidating the shared tag finds only those still held.
    const held = store.size;
    expect(store.invalidate(['category:x'], 20)).toBe(held);
    expect(store.size).toBe(0);
  });

  it('counts an answer’s text as the heap holds it: twice its length unless it is all ASCII', () => {
    const ascii = anEntry(['product:1'], 0, { json: `"${'a'.repeat(1000)}"` });
    const wide = anEntry(['product:1'], 0, { json: `"${'é'.repeat(1000)}"` });
    expect(entrySize(wide, 'k') - entrySize(ascii, 'k')).toBe(1002);
  });

  it('does not store one answer larger than a tenth of the cache', () => {
    const store = aStore({ maxBytes: 10_000, clock: clockAt(10) });
    expect(store.set('a', anEntry(['product:1'], 5, { json: `"${'x'.repeat(5000)}"` }), false)).toBe('too-large');
  });

  it('flushes instead of forgetting invalidations when too many distinct tags change at once', () => {
    const store = aStore({ maxRememberedTags: 10, clock: clockAt(10) });
    store.set('a', anEntry(['product:keep'], 5), false);
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

  it('in partitions, is live only while every one beats, and flushes once when the last silent one beats again', () => {
    let now = 0;
    let gaps = 0;
    const feed = new InvalidationFeed({ timeoutMs: 1000, partitions: 3, now: () => now, onGap: () => gaps++ });
    const beatAll = () => [0, 1, 2].forEach((partition) => feed.beat(0, partition));
    feed.beat(0, 0);
    feed.beat(0, 1);
    expect([feed.live, gaps]).toEqual([false, 0]);
    feed.beat(0, 2);
    expect([feed.live, gaps]).toEqual([true, 1]);
    // Partition 1 falls silent while the others beat: dead, and no flush while it stays so.
    for (now = 500; now < 3000; now += 500) {
      feed.beat(0, 0);
      feed.beat(0, 2);
    }
    expect([feed.live, feed.partitionLive(0), feed.partitionLive(1), gaps]).toEqual([false, true, false, 1]);
    expect(feed.silentForMs).toBe(3000);
    feed.beat(0, 1);
    expect([feed.live, gaps]).toEqual([true, 2]);
    // A proof older than the timeout proves nothing; a partition said down stays dead until it beats.
    feed.down(2);
    feed.beat(1500, 2);
    expect([feed.live, feed.partitionLive(0), feed.partitionLive(2)]).toEqual([false, true, false]);
    feed.beat(200, 2);
    expect([feed.live, gaps]).toEqual([true, 3]);
    beatAll();
    expect(gaps).toBe(3);
    expect(() => feed.beat(0, 3)).toThrow(/no partition 3/);
  });
});

describe('shared tier entries', () => {
  const SECRET = 'a-signing-secret-of-at-least-32-characters';
  const entry = { json: '{"a":"x\\ny"}', etag: 'W/"e"', tags: ['product:1', 'category:x'], public: true };
  const key = 'tablegraph:rc:t:hash|Op|{}|public';
  const mark = { seq: 7, at: 1_000_000 };
  const read = (text: string, at = key, secret: string | undefined = SECRET) =>
    decodeEntry(at, text, { secret, now: mark.at + 1000, maxAgeMs: 300_000 });

  it('round-trip with their tags, read mark, expiry, scope flag and ETag, whatever the answer holds', () => {
    const text = encodeEntry(key, entry, mark, mark.at + 300_000, SECRET);
    expect(read(text)).toEqual({ entry: { ...entry, mark, expiresAt: mark.at + 300_000 } });
    expect(read('not an entry')).toEqual({ refused: 'malformed' });
  });

  /** `text` with line `line` of its header replaced. */
  const withLine = (text: string, line: number, value: string) =>
    text
      .split('\n')
      .map((part, i) => (i === line ? value : part))
      .join('\n');

  it.each<[string, () => string, string, string]>([
    ['unsigned', () => encodeEntry(key, entry, mark, mark.at + 1000_000, undefined), key, 'unsigned'],
    ['signed with another key', () => encodeEntry(key, entry, mark, mark.at + 300_000, `${SECRET}!`), key, 'forged'],
    [
      'moved to another key (another viewer)',
      () => encodeEntry(key, entry, mark, mark.at + 300_000, SECRET),
      `${key}x`,
      'forged',
    ],
    [
      'with its tags stripped',
      () => withLine(encodeEntry(key, entry, mark, mark.at + 300_000, SECRET), 0, ''),
      key,
      'forged',
    ],
    [
      'with a later expiry',
      () => withLine(encodeEntry(key, entry, mark, mark.at + 300_000, SECRET), 3, '9999999999999'),
      key,
      'forged',
    ],
    [
      'with a newer read mark',
      () => withLine(encodeEntry(key, entry, mark, mark.at + 300_000, SECRET), 1, '99'),
      key,
      'forged',
    ],
    [
      'made public',
      () => withLine(encodeEntry(key, { ...entry, public: false }, mark, mark.at + 300_000, SECRET), 4, '1'),
      key,
      'forged',
    ],
    ['past its expiry', () => encodeEntry(key, entry, mark, mark.at + 500, SECRET), key, 'expired'],
    [
      'older than the maximum age',
      () => encodeEntry(key, entry, { ...mark, at: mark.at - 300_000 }, mark.at + 500_000, SECRET),
      key,
      'expired',
    ],
    [
      'without tags, signed or not',
      () => encodeEntry(key, { ...entry, tags: [] }, mark, mark.at + 300_000, SECRET),
      key,
      'untagged',
    ],
  ])('are refused %s', (_, make, at, refused) => {
    expect(read(make(), at)).toEqual({ refused });
  });

  it('are current only while every tag exists, unchanged since the read began', () => {
    const at = { seq: 7, at: 0 };
    expect(isCurrent(at, ['3:100', '7:200'])).toBe(true);
    expect(isCurrent(at, ['3:100', '8:200'])).toBe(false);
    // A missing tag key (expired or evicted) may have hidden a change.
    expect(isCurrent(at, ['3:100', ''])).toBe(false);
  });
});
