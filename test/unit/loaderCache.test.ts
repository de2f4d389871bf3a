/**
 * The loader cache two executors share (src/db/loaderCache.ts): a round of keys read at once,
 * each key once, and what was read (or failed) kept for the rest of the request, so graphql-js,
 * answering after a planned run that stopped, reads nothing again.
 */
import DataLoader from 'dataloader';
import { describe, expect, it } from 'vitest';
import { asPromise } from '../../src/db/continuation.js';
import { LoaderCache } from '../../src/db/loaderCache.js';
import type { Fetch } from '../../src/db/loaderCache.js';

/** Fails the whole request (every key) instead of answering a key. */
const FAIL_REQUEST = Symbol('fail the request');

/** A fetch that records the keys it is asked for and answers with `answer` (per key). */
function recordingFetch(answer: (key: string) => string | Error | typeof FAIL_REQUEST) {
  const calls: string[][] = [];
  const fetch: Fetch<string, string> = (keys, then) => {
    calls.push([...keys]);
    return Promise.resolve().then(() => {
      const values = keys.map(answer);
      if (values.includes(FAIL_REQUEST)) return then.failed(new Error('the request failed'));
      return then.done(values as string[]);
    });
  };
  return { calls, fetch };
}

const same = (key: string) => key;

describe('LoaderCache', () => {
  it('reads each missing key once and answers known values without a read', async () => {
    const cache = new LoaderCache<string>();
    const { calls, fetch } = recordingFetch((key) => key.toUpperCase());
    cache.put('a', 'known');
    const values = await cache.readAll(['a', 'b', 'b', 'c'], same, fetch, asPromise());
    expect(values).toEqual(['known', 'B', 'B', 'C']);
    expect(calls).toEqual([['b', 'c']]);
    expect(cache.readAll(['b', 'c'], same, fetch, asPromise())).toEqual(['B', 'C']);
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['a key that failed alone', (key: string) => (key === 'bad' ? new Error('no such key') : key), 'no such key'],
    ['a request that failed', (key: string) => (key === 'bad' ? FAIL_REQUEST : key), 'the request failed'],
  ] as const)(
    'keeps %s: a later readAll and a DataLoader load see it without reading again',
    async (_, answer, message) => {
      const cache = new LoaderCache<string>();
      const { calls, fetch } = recordingFetch(answer);
      await expect(cache.readAll(['ok', 'bad'], same, fetch, asPromise())).rejects.toThrow(message);
      expect(calls).toEqual([['ok', 'bad']]);
      await expect(cache.readAll(['bad'], same, fetch, asPromise())).rejects.toThrow(message);
      const loader = new DataLoader<string, string, string>((keys) => fetch(keys, asPromise()), { cacheMap: cache });
      await expect(loader.load('bad')).rejects.toThrow(message);
      expect(calls).toHaveLength(1);
    },
  );

  it('reads a failed key again once a write replaced its entry', async () => {
    const cache = new LoaderCache<string>();
    const { calls, fetch } = recordingFetch((key) => (key === 'bad' ? new Error('no such key') : key));
    await expect(cache.readAll(['bad'], same, fetch, asPromise())).rejects.toThrow('no such key');
    cache.put('bad', 'written');
    expect(cache.readAll(['bad'], same, fetch, asPromise())).toEqual(['written']);
    expect(calls).toHaveLength(1);
  });
});
