/**
 * The Redis a test runs on, in either mode the server supports: one redis-server, or a cluster
 * of three primaries. Tests of what must hold in both run `describe.each(REDIS_MODES)`.
 */
import { pino } from 'pino';
import type { RedisMode } from '../../src/events/redisConnection.js';
import { RedisChannels } from '../../src/events/redisChannels.js';
import { RedisCluster } from './redisCluster.js';
import { RedisServer } from './redisServer.js';

export type TestRedis = RedisServer | RedisCluster;

export const REDIS_MODES: readonly RedisMode[] = ['single', 'cluster'];

export const startRedis = (mode: RedisMode): Promise<TestRedis> =>
  mode === 'cluster' ? RedisCluster.start() : RedisServer.start();

/**
 * Plain pub/sub on `redis`, as anyone who can reach it could publish and listen (no signing
 * secret: what it sends is unsigned unless the test seals it).
 */
export async function rawChannels(redis: TestRedis): Promise<RedisChannels> {
  const channels = new RedisChannels(
    { ...redis.settings, signingSecret: undefined },
    { log: pino({ level: 'silent' }) },
  );
  await channels.start();
  return channels;
}
