/**
 * A process's Redis as its configuration names it: with REDIS_URL (REDIS_MODE, signed with
 * REDIS_SIGNING_SECRET), one RedisChannels and the buses that ride on it, connected (never
 * blocking start-up for long: queries and mutations do not need Redis); without it, none (the
 * caller keeps events in the process).
 */
import type { Logger } from 'pino';
import type { DatabaseConfig, StreamOutputConfig } from '../config/index.js';
import { RedisInvalidationBus } from './invalidationBus.js';
import { RedisChannels } from './redisChannels.js';
import type { RedisSettings } from './redisConnection.js';
import { RedisEventBus } from './redisEventBus.js';

export type RedisConfig = Pick<DatabaseConfig, 'tableName'> &
  Pick<StreamOutputConfig, 'redisUrl' | 'redisMode' | 'redisSigningSecret'>;

/** REDIS_URL, REDIS_MODE and REDIS_SIGNING_SECRET, or undefined without REDIS_URL. */
export const redisSettingsOf = (config: RedisConfig): RedisSettings | undefined =>
  config.redisUrl
    ? { url: config.redisUrl, mode: config.redisMode, signingSecret: config.redisSigningSecret }
    : undefined;

export interface RedisMessagingOptions {
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Listen to the change events too: an API instance does; a stream reader that only publishes does not. */
  subscribe: boolean;
  /**
   * The invalidation channels: `listen` (an API instance with a response cache fed from Redis),
   * `publish` (a stream reader), or none.
   */
  invalidations?: 'listen' | 'publish' | undefined;
  /** The name this process's invalidations and heartbeats carry (a consumer's lease owner). */
  from?: string | undefined;
}

/** What a process holds on Redis; `close` stops the buses, then the connections. */
export interface RedisMessaging {
  channels: RedisChannels;
  events: RedisEventBus;
  invalidations: RedisInvalidationBus | undefined;
  close(): Promise<void>;
}

export async function startRedisMessaging(
  config: RedisConfig,
  options: RedisMessagingOptions,
): Promise<RedisMessaging | undefined> {
  const settings = redisSettingsOf(config);
  if (!settings) return undefined;
  const { log } = options;
  const channels = new RedisChannels(settings, { log });
  const events = new RedisEventBus({ channels, tableName: config.tableName, log, subscribe: options.subscribe });
  const invalidations = options.invalidations
    ? new RedisInvalidationBus({
        channels,
        tableName: config.tableName,
        log,
        subscribe: options.invalidations === 'listen',
        from: options.from,
      })
    : undefined;
  await channels.start();
  return {
    channels,
    events,
    invalidations,
    close: async () => {
      await events.close();
      await invalidations?.close();
      await channels.close();
    },
  };
}
