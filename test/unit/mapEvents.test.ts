import { describe, expect, it } from 'vitest';
import { mapEvents } from '../../src/pipeline/execution/mapEvents.js';

/** A source that records whether it was closed, and whose next() can wait. */
function source(values: number[]) {
  let closed = 0;
  let wake: ((result: IteratorResult<number>) => void) | undefined;
  const iterator: AsyncIterableIterator<number> = {
    next: () => {
      const value = values.shift();
      if (value !== undefined) return Promise.resolve({ value, done: false });
      return new Promise((resolve) => (wake = resolve));
    },
    return: () => {
      closed++;
      wake?.({ value: undefined, done: true });
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return { iterator, closed: () => closed };
}

describe('mapEvents', () => {
  it('maps in order, a promise awaited and a plain value passed on', async () => {
    const { iterator } = source([1, 2, 3]);
    const mapped = mapEvents(iterator, (n) => (n % 2 ? Promise.resolve(n * 10) : n * 100));
    expect([(await mapped.next()).value, (await mapped.next()).value, (await mapped.next()).value]).toEqual([
      10, 200, 30,
    ]);
  });

  it("passes a client's return() straight to the source, ending a next() that waits", async () => {
    const { iterator, closed } = source([]);
    const mapped = mapEvents(iterator, (n) => n);
    const waiting = mapped.next();
    await mapped.return();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(closed()).toBe(1);
  });

  it('closes the source and rejects when the mapping throws, sync or async', async () => {
    for (const fail of [
      () => {
        throw new Error('boom');
      },
      () => Promise.reject(new Error('boom')),
    ]) {
      const { iterator, closed } = source([1]);
      await expect(mapEvents(iterator, fail).next()).rejects.toThrow('boom');
      expect(closed()).toBe(1);
    }
  });
});
