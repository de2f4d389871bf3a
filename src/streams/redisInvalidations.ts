/**
 * A stream reader's invalidations and heartbeats on Redis (src/events/invalidationBus.ts), for
 * `npm run consumer` and the stream Lambda alike: what the API instances' caches hear.
 *
 * - Each tag is judged here as the instances will judge it (invalidationMessages.ts): one
 *   outside the tag pattern widens to its kind, and the batch's other tags go out as they are.
 * - With the shared cache tier's bump (src/pipeline/responseCache/tagBumps.ts), a batch's tags
 *   are bumped there first and go out saying so, so no instance bumps them again; a bump that
 *   fails or is late sends them without the flag, and every instance bumps them itself.
 * - A heartbeat goes out at most once per HEARTBEAT_INTERVAL_MS for tenures alone, at once for a
 *   probe not announced yet (an instance waits for it), and never for nothing: a reader without
 *   a lease and without a probe (a consumer that holds no shard, a Lambda batch of other
 *   records) vouches for no shard, so its beat would prove nothing.
 */
import type { RedisInvalidationBus } from '../events/invalidationBus.js';
import { sortTags } from '../events/invalidationMessages.js';
import type { InvalidationOutput, LiveProof } from './streamOutputs.js';

export const HEARTBEAT_INTERVAL_MS = 1000;

/** Bumps tags in the response cache's shared tier; resolves whether Redis took it (never rejects). */
export type BumpTags = (tags: readonly string[]) => Promise<boolean>;

/**
 * `group`: the consumer name whose leases the tenures are (the instances check them there);
 * `bump`: the shared tier's bump, done before each batch's tags go out (none: the instances bump).
 */
export function redisInvalidations(bus: RedisInvalidationBus, group: string, bump?: BumpTags): InvalidationOutput {
  let lastBeat = -Infinity;
  let lastProbe = -Infinity;
  return {
    tags: ({ tags, changedAtMs, traceparents }) => {
      const sorted = sortTags(tags);
      const bumped = bump && sorted.tags.length > 0 ? bump(sorted.tags) : undefined;
      return bus.publishTags(sorted, { changedAt: changedAtMs, traceparents, bumped });
    },
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
