/**
 * The change event bus a process's configuration names: with REDIS_URL, Redis pub/sub signed
 * with REDIS_SIGNING_SECRET, connected (never blocking start-up for long: queries and mutations
 * do not need Redis); without it, none (the caller keeps events in the process).
 */
import type { Logger } from 'pino';
import type { DatabaseConfig, StreamOutputConfig } from '../config/index.js';
import { RedisEventBus } from './redisEventBus.js';

export interface BusOptions {
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Listen to the channel too: an API instance does; a stream reader that only publishes does not. */
  subscribe: boolean;
}

export async function startRedisEventBus(
  config: Pick<DatabaseConfig, 'tableName'> & Pick<StreamOutputConfig, 'redisUrl' | 'redisSigningSecret'>,
  { log, subscribe }: BusOptions,
): Promise<RedisEventBus | undefined> {
  if (!config.redisUrl) return undefined;
  const bus = new RedisEventBus({
    url: config.redisUrl,
    tableName: config.tableName,
    log,
    subscribe,
    signingSecret: config.redisSigningSecret,
  });
  await bus.start();
  return bus;
}
