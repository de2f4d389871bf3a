/**
 * One execution per event for the subscriptions that would get the same answer: the same
 * operation (document, name, variables) and the same viewer (every claim alike), and for no
 * other subscription.
 */
import { describe, expect, it } from 'vitest';
import type { Viewer } from '../../src/auth/tokens.js';
import { createSharedEvents, sharingKey } from '../../src/pipeline/execution/sharedEvents.js';

const operation = (variables: Record<string, unknown> = {}, hash = 'doc-1', operationName: string | null = null) => ({
  document: { hash },
  operationName,
  variables,
});
const alice: Viewer = { userId: 'alice', role: 'customer', expiresAt: 2_000_000_000 };

describe('sharing a subscription event', () => {
  it('keys alike only the same operation for a viewer with the same claims', () => {
    const key = sharingKey(operation({ userId: 'alice' }), alice);
    expect(sharingKey(operation({ userId: 'alice' }), { ...alice })).toBe(key);
    const others = [
      sharingKey(operation({ userId: 'bob' }), alice),
      sharingKey(operation({ userId: 'alice' }, 'doc-2'), alice),
      sharingKey(operation({ userId: 'alice' }, 'doc-1', 'Named'), alice),
      sharingKey(operation({ userId: 'alice' }), { ...alice, role: 'admin' }),
      sharingKey(operation({ userId: 'alice' }), { ...alice, userId: 'bob' }),
      sharingKey(operation({ userId: 'alice' }), { ...alice, expiresAt: 2_000_000_001 }),
      sharingKey(operation({ userId: 'alice' }), { ...alice, verifiedEmail: 'alice@example.com' }),
      sharingKey(operation({ userId: 'alice' }), null),
    ];
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
  });

  it('keys by every field of the viewer, in any order, including one it does not know by name', () => {
    const key = sharingKey(operation(), alice);
    expect(sharingKey(operation(), { expiresAt: 2_000_000_000, role: 'customer', userId: 'alice' })).toBe(key);
    expect(sharingKey(operation(), { ...alice, tenant: 'north' } as Viewer)).not.toBe(key);
  });

  it('executes once per event and key, and again for another event or key', async () => {
    const shared = createSharedEvents();
    let executions = 0;
    const execute = () => Promise.resolve(++executions);
    const first = { seq: '1' };
    const second = { seq: '2' };
    expect(await Promise.all([shared(first, 'a', execute), shared(first, 'a', execute)])).toEqual([1, 1]);
    expect(await shared(first, 'b', execute)).toBe(2);
    expect(await shared(second, 'a', execute)).toBe(3);
    expect(executions).toBe(3);
  });

  it('hands a failed execution to every subscription that shares it', async () => {
    const shared = createSharedEvents();
    const event = { seq: '1' };
    const failing = () => Promise.reject(new Error('read failed'));
    await expect(shared(event, 'a', failing)).rejects.toThrow('read failed');
    await expect(shared(event, 'a', () => Promise.resolve('other'))).rejects.toThrow('read failed');
  });
});
