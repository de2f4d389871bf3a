import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { RedisChannels } from '../src/events/redisChannels.js';
import { RedisCluster } from '../test/support/redisCluster.js';
const redis = await RedisCluster.start();
const log = pino({ level: 'debug' });
const channels = new RedisChannels(redis.settings, { log });
await channels.start();
const names = Array.from({ length: 200 }, () => `tablegraph:{BenchEvents:events:user-orders:${randomUUID()}}`);
let subscribed = 0;
for (const name of names) channels.listen(name, { message: () => undefined, subscribed: () => subscribed++ });
for (let i = 0; i < 20; i++) {
  await new Promise((r) => setTimeout(r, 500));
  console.log('subscribed', subscribed, names.filter((n) => channels.isSubscribed(n)).length);
  if (subscribed >= 200) break;
}
await channels.close();
await redis.dispose();
process.exit(0);
