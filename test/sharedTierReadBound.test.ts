/**
 * The shared tier's read bound (250 ms) is a bound on Redis, not on this process: an answer
 * Redis gave in time counts even when this process's event loop was busy past the bound before
 * it read the socket (a busy machine, a long request, a GC). Node runs the due timers of a turn
 * before it reads the sockets, so a bare timer race took such an answer for none: a miss, and a
 * store dropped, on a busy machine. (A Redis that does not
 * answer is still a miss at the bound: test/responseCache.redis.test.ts.)
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TIMEOUT_MS, SharedTier } from '../src/pipeline/responseCache/sharedTier.js';
import { isIndexTag } from '../src/table/dependencies.js';
import { RedisServer } from './support/redisServer.js';

const log = pino({ level: 'silent' });
let redis: RedisServer;
let tier: SharedTier;

/** Keeps this process's event loop busy (no callback runs) for `ms`. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning: what a loaded machine or a long request does to the loop
  }
}

beforeAll(async () => {
  redis = await RedisServer.start();
  tier = new SharedTier({
    redis: { ...redis.settings, signingSecret: 'the-signing-secret-of-the-read-bound-test-0123456789' },
    tableName: 'read-bound',
    maxAgeMs: 60_000,
    holdDownMs: 0,
    maxEntryBytes: 100_000,
    isIndexTag,
    log,
  });
  await tier.start();
});

afterAll(async () => {
  await tier?.stop();
  await redis?.kill();
});

describe('the shared tier read bound', () => {
  it('takes an answer Redis gave in time though this process read it past the bound', async () => {
    const keys = Array.from({ length: 5 }, (_, i) => `doc-${i}|Op|{}|public`);
    for (const [i, key] of keys.entries()) {
      const { mark } = await tier.get(key);
      if (!mark) throw new Error('the tier is not readable');
      await tier.set(key, { json: `{"n":${i}}`, etag: `"e${i}"`, tags: ['product:p1'], public: true }, mark, false);
    }
    expect(tier.stats.stores).toBe(keys.length);
    for (const [i, key] of keys.entries()) {
      // Sent at once (ioredis writes a command as it is called); Redis answers within a
      // millisecond, while this loop is busy past the bound. This code runs in a socket's
      // callback (after an awaited Redis answer), so the bound's timer is due before the
      // sockets are read again.
      const reading = tier.get(key);
      busyFor(READ_TIMEOUT_MS + 150);
      expect((await reading).hit?.json).toBe(`{"n":${i}}`);
    }
    expect(tier.stats.errors).toBe(0);
  });
});
