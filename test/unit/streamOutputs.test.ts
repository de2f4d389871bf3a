/**
 * What stream records turn into, whichever reader reads them (src/streams/streamOutputs.ts):
 * tags before the batch is processed, a heartbeat after, naming the newest feed probe read and
 * vouching for the tags sent before it; and how a reader on Redis paces its heartbeats.
 */
import { describe, expect, it } from 'vitest';
import type { RedisInvalidationBus } from '../../src/events/invalidationBus.js';
import type { Heartbeat } from '../../src/events/invalidationMessages.js';
import { InvalidationFeed } from '../../src/pipeline/responseCache/invalidationFeed.js';
import { CLUSTER_PARTITIONS, partitionOf } from '../../src/pipeline/responseCache/sharedTier.js';
import { newestProbeIn } from '../../src/streams/feedProbe.js';
import type { ChangeEvent } from '../../src/events/changeEvent.js';
import type { ChangeRecord } from '../../src/streams/processor.js';
import { HEARTBEAT_INTERVAL_MS, redisInvalidations } from '../../src/streams/redisInvalidations.js';
import { StreamOutputs } from '../../src/streams/streamOutputs.js';
import type { LiveProof } from '../../src/streams/streamOutputs.js';
import { FEED_PROBE_KEY, productKey } from '../../src/table/keys.js';

const s = (value: string) => ({ S: value });

const aStockChange = (productId: string): ChangeRecord => ({
  eventName: 'MODIFY',
  dynamodb: {
    Keys: { PK: s(productKey(productId).PK), SK: s(productKey(productId).SK) },
    NewImage: { PK: s(productKey(productId).PK), SK: s(productKey(productId).SK), entityType: s('Product') },
  },
});

const aProbe = (writtenAt: number): ChangeRecord => ({
  eventName: 'MODIFY',
  dynamodb: {
    Keys: { PK: s(FEED_PROBE_KEY.PK), SK: s(FEED_PROBE_KEY.SK) },
    NewImage: { PK: s(FEED_PROBE_KEY.PK), SK: s(FEED_PROBE_KEY.SK), writtenAt: { N: String(writtenAt) } },
  },
});

/** Outputs that record what reaches them, in order. */
function recorded(tagsGoOut: () => boolean = () => true) {
  const seen: (string | LiveProof)[] = [];
  const outputs = new StreamOutputs({
    publish: () => undefined,
    invalidations: {
      tags: ({ tags }) => {
        seen.push(`tags ${tags.filter((tag) => tag.startsWith('product:')).join(' ')}`);
        return tagsGoOut();
      },
      beat: (proof) => void seen.push(proof),
    },
    purge: { purge: (tags) => void seen.push(`purge ${tags.length > 0}`) },
  });
  return { outputs, seen };
}

describe('streamOutputs', () => {
  it('sends a batch’s tags and purges before it is processed, and a heartbeat naming the newest probe after', async () => {
    const { outputs, seen } = recorded();
    outputs.changed([aStockChange('p1'), aProbe(1000), aProbe(3000), aProbe(2000)]);
    expect(seen).toEqual(['tags product:p1', 'purge true']);
    outputs.alive([{ shardId: 'shard-1', epoch: 2 }]);
    await outputs.settle();
    expect(seen.at(-1)).toEqual({ tenures: [{ shardId: 'shard-1', epoch: 2 }], probe: 3000 });
    // A probe is answered once.
    outputs.alive();
    await outputs.settle();
    expect(seen.at(-1)).toEqual({ tenures: [], probe: undefined });
  });

  it('sends no heartbeat after tags that did not go out: it would vouch for a lost invalidation', async () => {
    let goOut = false;
    const { outputs, seen } = recorded(() => goOut);
    outputs.changed([aStockChange('p1'), aProbe(1000)]);
    outputs.alive();
    await outputs.settle();
    expect(seen.filter((entry) => typeof entry !== 'string')).toEqual([]);
    goOut = true;
    outputs.changed([aStockChange('p2'), aProbe(2000)]);
    outputs.alive();
    await outputs.settle();
    expect(seen.at(-1)).toEqual({ tenures: [], probe: 2000 });
  });

  it('publishes a change event only once the tags of every batch read before it are out, sent or failed', async () => {
    const seen: string[] = [];
    const held: ((sent: boolean) => void)[] = [];
    const outputs = new StreamOutputs({
      publish: (event) => void seen.push(`event ${event.type}`),
      invalidations: {
        tags: ({ tags }) =>
          new Promise<boolean>((resolve) =>
            held.push((sent) => {
              seen.push(`tags ${tags.filter((tag) => tag.startsWith('product:')).join(' ')}`);
              resolve(sent);
            }),
          ),
        beat: () => undefined,
      },
    });
    const event = { type: 'ORDER_PLACED' } as unknown as ChangeEvent;
    outputs.changed([aStockChange('p1')]);
    outputs.changed([aStockChange('p2')]);
    const published = outputs.publish(event);
    // The later batch's tags out first: the event still waits for the earlier batch's.
    held[1]?.(true);
    await Promise.resolve();
    await Promise.resolve();
    expect(seen).toEqual(['tags product:p2']);
    held[0]?.(false);
    await published;
    expect(seen).toEqual(['tags product:p2', 'tags product:p1', 'event ORDER_PLACED']);
    // Nothing on its way: the event goes at once (in the same turn).
    void outputs.publish(event);
    expect(seen.at(-1)).toBe('event ORDER_PLACED');
    expect(seen).toHaveLength(4);
  });

  it('finds a probe only in a write of the probe item with its time', () => {
    const other = aProbe(5000);
    other.dynamodb = { ...other.dynamodb, Keys: { PK: s(FEED_PROBE_KEY.PK), SK: s('LEASE#x#SHARD#y') } };
    const timeless = aProbe(5000);
    timeless.dynamodb = { ...timeless.dynamodb, NewImage: { PK: s(FEED_PROBE_KEY.PK), SK: s(FEED_PROBE_KEY.SK) } };
    expect(newestProbeIn([aStockChange('p1'), other, timeless])).toBeUndefined();
    expect(newestProbeIn([aProbe(7), aStockChange('p1')])).toBe(7);
  });
});

describe('a reader’s heartbeats on Redis', () => {
  function aReader() {
    const beats: Omit<Heartbeat, 'kind' | 'from'>[] = [];
    const bus = {
      publishTags: () => Promise.resolve(true),
      publishHeartbeat: (heartbeat: Omit<Heartbeat, 'kind' | 'from'>) => {
        beats.push(heartbeat);
        return Promise.resolve(true);
      },
    } as unknown as RedisInvalidationBus;
    return { output: redisInvalidations(bus, 'processor'), beats };
  }
  const tenures = [{ shardId: 'shard-1', epoch: 1 }];

  it('beats for its tenures at most once per interval, at once for a new probe, and never for nothing', async () => {
    const { output, beats } = aReader();
    await output.beat({ tenures: [] });
    expect(beats).toEqual([]);
    await output.beat({ tenures });
    await output.beat({ tenures });
    expect(beats).toEqual([{ group: 'processor', tenures }]);
    await output.beat({ tenures, probe: 1234 });
    await output.beat({ tenures: [], probe: 1234 });
    expect(beats).toEqual([
      { group: 'processor', tenures },
      { group: 'processor', tenures, probe: 1234 },
    ]);
    expect(HEARTBEAT_INTERVAL_MS).toBe(1000);
  });
});

describe('a feed proven as of an earlier instant', () => {
  it('stays live until the timeout past the instant proven, and a proof older than that proves nothing', () => {
    let now = 10_000;
    let gaps = 0;
    const feed = new InvalidationFeed({ timeoutMs: 5000, now: () => now, onGap: () => gaps++ });
    feed.beat(6000);
    expect(feed.live).toBe(false);
    expect(gaps).toBe(0);
    feed.beat(1500);
    expect([feed.live, gaps, feed.silentForMs]).toEqual([true, 1, 1500]);
    now += 3400;
    expect(feed.live).toBe(true);
    now += 200;
    expect(feed.live).toBe(false);
    // A later beat proving an older instant does not move the proof back.
    feed.beat(0);
    feed.beat(4000);
    expect(feed.silentForMs).toBe(0);
  });
});

describe('the shared tier’s partitions', () => {
  it('place a key always in the same partition, and spread keys over all of them', () => {
    const keys = Array.from({ length: 400 }, (_, i) => `doc-${i}|Op|{"id":"${i}"}|viewer:u${i % 7}:customer`);
    expect(keys.map((key) => partitionOf(key, CLUSTER_PARTITIONS))).toEqual(
      keys.map((key) => partitionOf(key, CLUSTER_PARTITIONS)),
    );
    const counts = new Array<number>(CLUSTER_PARTITIONS).fill(0);
    for (const key of keys) counts[partitionOf(key, CLUSTER_PARTITIONS)]!++;
    for (const count of counts) expect(count).toBeGreaterThan(400 / CLUSTER_PARTITIONS / 2);
    expect(new Set(keys.map((key) => partitionOf(key, 1)))).toEqual(new Set([0]));
  });
});
