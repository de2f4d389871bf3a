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

const RAW_COMMAND_TIMEOUT_MS = 10_000;

export const REDIS_MODES: readonly RedisMode[] = ['single', 'cluster'];

export const startRedis = (mode: RedisMode): Promise<TestRedis> =>
  mode === 'cluster' ? RedisCluster.start() : RedisServer.start();

/**
 * Plain pub/sub on `redis`, as anyone who can reach it could publish and listen (no signing
 * secret: what it sends is unsigned unless the test seals it). Its commands may take up to
 * RAW_COMMAND_TIMEOUT_MS: what it sends is the test's input, not what is tested, and a 14 MB
 * message to a cluster can outlast the default 1 s command timeout on a loaded machine.
 */
export async function rawChannels(redis: TestRedis): Promise<RedisChannels> {
  const channels = new RedisChannels(
    { ...redis.settings, signingSecret: undefined },
    { log: pino({ level: 'silent' }), commandTimeoutMs: RAW_COMMAND_TIMEOUT_MS },
  );
  await channels.start();
  return channels;
}
