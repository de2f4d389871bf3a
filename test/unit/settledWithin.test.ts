import { describe, expect, it } from 'vitest';
import { settledWithin } from '../../src/settledWithin.js';

describe('settledWithin', () => {
  it('is true for a promise that resolves or rejects in time, and never rejects itself', async () => {
    expect(await settledWithin(Promise.resolve('done'), 1000)).toBe(true);
    expect(await settledWithin(Promise.reject(new Error('failed')), 1000)).toBe(true);
  });

  it('is false once the bound passes first, without waiting for the promise', async () => {
    const never = new Promise<never>(() => undefined);
    expect(await settledWithin(never, 5)).toBe(false);
  });
});
