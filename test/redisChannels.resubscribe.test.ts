/**
 * A process's pub/sub closed while its subscriptions are being restored after a reconnect, on a
 * real redis-server: the SUBSCRIBEs in flight fail with the connection, and each failure is
 * handled (logged), none left behind as an unhandled rejection. (One node; the option that
 * matters is the same for every subscriber connection, a cluster's included: the unit test of
 * the connection options pins it.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisChannels } from '../src/events/redisChannels.js';
import { RedisServer } from './support/redisServer.js';

const CHANNELS = 20;
let redis: RedisServer;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await redis?.dispose();
});

describe('pub/sub closed while it subscribes again after a reconnect', () => {
  it('handles every SUBSCRIBE that fails with the connection: no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    let failed = 0;
    let allFailed!: () => void;
    const failures = new Promise<void>((resolve) => (allFailed = resolve));
    const log = {
      debug: () => undefined,
      info: () => undefined,
      warn: (_: unknown, msg: string) => {
        if (msg.startsWith('redis subscribe failed') && ++failed === CHANNELS) allFailed();
      },
    };
    const channels = new RedisChannels(redis.settings, { log: log as never });
    let armed = false;
    let paused!: () => void;
    const resubscribing = new Promise<void>((resolve) => (paused = resolve));
    // Redis hangs the moment the subscriber is back and starts subscribing again: nothing it
    // sends from then on is answered.
    const subscribing = () => {
      if (!armed) return;
      armed = false;
      redis.pause();
      paused();
    };
    const names = Array.from({ length: CHANNELS }, (_, i) => `tablegraph:{resubscribe-${i}}:events`);
    for (const name of names) channels.listen(name, { message: () => undefined, subscribing });
    await channels.start(10_000);
    expect(names.filter((name) => channels.isSubscribed(name))).toHaveLength(CHANNELS);
    try {
      armed = true;
      await redis.kill();
      await redis.restart();
      await resubscribing;
      // The process shuts down (QUIT unanswered, then the connections are dropped), and Redis
      // dies with the SUBSCRIBEs unanswered: each fails with "Connection is closed.".
      await channels.close();
      await redis.kill();
      await failures;
      // Node reports a rejection nobody handled once the microtasks of its turn are done.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
