/**
 * The heartbeats of the cache fault rig's `forged-heartbeat` fault (cacheFaults.ts), as an
 * attacker who can SUBSCRIBE and PUBLISH on the Redis would handle them: the last real heartbeat
 * on each invalidation channel kept as it was sent, then replayed and forged on every channel.
 */
import { invalidationPurpose } from '../../src/events/invalidationBus.js';
import { invalidationChannels } from '../../src/events/invalidationPartitions.js';
import type { RedisChannels } from '../../src/events/redisChannels.js';
import { openEnvelope, Sealer } from '../../src/events/signedEnvelope.js';
import { rawChannels } from './testRedis.js';
import type { TestRedis } from './testRedis.js';

/** Listens on each invalidation channel of `tableName` and keeps the last real heartbeat of each in `heartbeats`. */
export async function captureHeartbeats(
  redis: TestRedis,
  tableName: string,
  heartbeats: Map<string, Buffer>,
): Promise<RedisChannels> {
  const capture = await rawChannels(redis);
  for (const channel of invalidationChannels(tableName)) {
    capture.listen(channel, {
      message: (raw) => {
        const opened = openEnvelope(raw, { purpose: 'invalidation', secret: undefined, maxBytes: 1_000_000 });
        if (opened.ok && opened.body.includes('"kind":"heartbeat"')) heartbeats.set(channel, raw);
      },
    });
  }
  return capture;
}

/**
 * Publishes on each invalidation channel, every 100 ms until stopped, ten each of: the
 * heartbeat captured there as it was (a replay), partition 0's captured heartbeat (a replay on
 * another channel), its body re-sealed fresh and unsigned under the consumer's name, and signed
 * with a guessed key.
 */
export async function forgeHeartbeats(
  redis: TestRedis,
  tableName: string,
  heartbeats: ReadonlyMap<string, Buffer>,
  run: { forgedHeartbeats: number },
): Promise<() => Promise<void>> {
  const channels = invalidationChannels(tableName);
  const first = heartbeats.get(channels[0] ?? '') as Buffer;
  const opened = openEnvelope(first, { purpose: 'invalidation', secret: undefined, maxBytes: 1_000_000 });
  if (!opened.ok) throw new Error('no heartbeat to forge from');
  const unsigned = new Sealer(invalidationPurpose(tableName, 0), undefined, opened.from);
  const guessed = new Sealer(
    invalidationPurpose(tableName, 0),
    'a-guessed-secret-of-at-least-32-characters',
    opened.from,
  );
  const publisher = await rawChannels(redis);
  const timer = setInterval(() => {
    for (let i = 0; i < 10; i++) {
      for (const channel of channels) {
        const own = heartbeats.get(channel) as Buffer;
        const forged = [own.toString(), first.toString(), unsigned.seal(opened.body), guessed.seal(opened.body)];
        for (const message of forged) {
          run.forgedHeartbeats++;
          void publisher.publish(channel, message).catch(() => undefined);
        }
      }
    }
  }, 100);
  return async () => {
    clearInterval(timer);
    await publisher.close();
  };
}
