/**
 * The change event bus of a process of its own on Redis (one node or a cluster): what a test
 * listens with, as an API instance would, and publishes with, as a consumer would.
 */
import { pino } from 'pino';
import type { Logger } from 'pino';
import { RedisChannels } from '../../src/events/redisChannels.js';
import type { RedisSettings } from '../../src/events/redisConnection.js';
import { RedisEventBus } from '../../src/events/redisEventBus.js';
import type { RedisEventBusOptions } from '../../src/events/redisEventBus.js';

/** A bus with its own connections; `close` ends both. */
export type OpenedEventBus = RedisEventBus & { channels: RedisChannels };

/** `watch`: the change-event topics it listens to, subscribed before this resolves. */
export async function openEventBus(
  settings: RedisSettings,
  tableName: string,
  { watch = [], ...options }: Partial<Omit<RedisEventBusOptions, 'channels' | 'tableName'>> & { watch?: string[] } = {},
): Promise<OpenedEventBus> {
  const log = (options.log ?? pino({ level: 'silent' })) as Logger;
  const channels = new RedisChannels(settings, { log });
  const bus = new RedisEventBus({ ...options, channels, tableName, log });
  for (const topic of watch) bus.watch(topic);
  await channels.start();
  const close = bus.close.bind(bus);
  return Object.assign(bus, {
    channels,
    close: async () => {
      await close();
      await channels.close();
    },
  });
}
