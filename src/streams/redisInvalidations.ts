/**
 * A stream reader's invalidations and heartbeats on Redis (src/events/invalidationBus.ts), for
 * `npm run consumer` and the stream Lambda alike: what the API instances' caches hear.
 *
 * - Each tag is judged here as the instances will judge it (invalidationMessages.ts): one
 *   outside the tag pattern widens to its kind, and the batch's other tags go out as they are.
 * - A heartbeat goes out at most once per HEARTBEAT_INTERVAL_MS for tenures alone, at once for a
 *   probe not announced yet (an instance waits for it), and never for nothing: a reader without
 *   a lease and without a probe (a consumer that holds no shard, a Lambda batch of other
 *   records) vouches for no shard, so its beat would prove nothing.
 */
import type { RedisInvalidationBus } from '../events/invalidationBus.js';
import { sortTags } from '../events/invalidationMessages.js';
import type { InvalidationOutput, LiveProof } from './streamOutputs.js';

export const HEARTBEAT_INTERVAL_MS = 1000;

/** `group`: the consumer name whose leases the tenures are (the instances check them there). */
export function redisInvalidations(bus: RedisInvalidationBus, group: string): InvalidationOutput {
  let lastBeat = -Infinity;
  let lastProbe = -Infinity;
  return {
    tags: ({ tags, changedAtMs, traceparents }) =>
      bus.publishTags(sortTags(tags), { changedAt: changedAtMs, traceparents }),
    beat: async ({ tenures, probe }: LiveProof) => {
      const newProbe = probe !== undefined && probe > lastProbe;
      const now = performance.now();
      if (!newProbe && (tenures.length === 0 || now - lastBeat < HEARTBEAT_INTERVAL_MS)) return;
      lastBeat = now;
      if (newProbe) lastProbe = probe;
      await bus.publishHeartbeat({
        group,
        tenures: tenures.map(({ shardId, epoch }) => ({ shardId, epoch })),
        ...(newProbe ? { probe } : {}),
      });
    },
  };
}
