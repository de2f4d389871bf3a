/**
 * The response cache's parts on Redis, on one redis-server and on a cluster of three primaries:
 * invalidations and heartbeats between processes, on their partitions' channels (each its own RedisChannels, as an instance
 * and a stream reader would hold), what a listener is told when the node serving its channel
 * dies and comes back, and the shared tier: an entry one instance stores is a hit for another,
 * a bump makes it invalid in every partition, and in a cluster the partitions spread over the
 * primaries while each script stays in one slot. A stream reader bumps a batch's tags before
 * its message goes out, so an instance that hears it finds them invalid without bumping; an
 * entry stored while that bump runs, or read while the message was on its way, is never served.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUMP_WAIT_MS, RedisInvalidationBus } from '../src/events/invalidationBus.js';
import type { InvalidationEvent } from '../src/events/invalidationBus.js';
import { RedisChannels } from '../src/events/redisChannels.js';
import { partitionOf } from '../src/events/invalidationPartitions.js';
import { cachePartitionPrefix } from '../src/events/redisNames.js';
import { eventTopicChannel, eventTopicHistory } from '../src/events/redisEventBus.js';
import {
  BUMP_TIMEOUT_MS,
  CLUSTER_PARTITIONS,
  READ_TIMEOUT_MS,
  SharedTier,
} from '../src/pipeline/responseCache/sharedTier.js';
import type { SharedTierOptions } from '../src/pipeline/responseCache/sharedTier.js';
import { PublisherBumps } from '../src/pipeline/responseCache/tagBumps.js';
import { redisInvalidations } from '../src/streams/redisInvalidations.js';
import { isIndexTag } from '../src/table/dependencies.js';
import { RedisCluster } from './support/redisCluster.js';
import { REDIS_MODES, startRedis } from './support/testRedis.js';
import type { TestRedis } from './support/testRedis.js';
import { waitUntil } from './support/waitUntil.js';

const SECRET = 'the-signing-secret-of-the-cache-redis-test-0123456789';
const log = pino({ level: 'silent' });
let tableNo = 0;

describe.each(REDIS_MODES)('the response cache on Redis (%s)', (mode) => {
  let redis: TestRedis;
  const closing: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    redis = await startRedis(mode);
  });

  afterAll(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await redis?.dispose();
  });

  /** An invalidation bus of a process of its own on `tableName`'s channels. */
  async function aBus(tableName: string, subscribe: boolean, from?: string) {
    const channels = new RedisChannels({ ...redis.settings, signingSecret: SECRET }, { log });
    const bus = new RedisInvalidationBus({ channels, tableName, log, subscribe, from });
    const heard: InvalidationEvent[] = [];
    const downs: number[] = [];
    bus.subscribe((event) => void heard.push(event));
    bus.onDown((partition) => void downs.push(partition));
    await channels.start();
    closing.push(async () => {
      await bus.close();
      await channels.close();
    });
    return { bus, channels, heard, downs: () => downs };
  }

  /**
   * A tier of an instance. What these tests check is what the tier serves, not how long a read
   * may take: their reads may take as long as a bump (BUMP_TIMEOUT_MS, or the bump bound
   * given). At the product's read bound (READ_TIMEOUT_MS, 250 ms) a fresh tier's first reads
   * on a busy machine were misses (in a cluster each primary's connection opens at its first
   * command), and a read that is a miss has no mark to store under. The read bound has a test
   * of its own below.
   */
  function aTier(tableName: string, options: Partial<SharedTierOptions> = {}): SharedTier {
    const tier = new SharedTier({
      redis: { ...redis.settings, signingSecret: SECRET },
      tableName,
      maxAgeMs: 60_000,
      holdDownMs: 0,
      maxEntryBytes: 100_000,
      isIndexTag,
      log,
      timeoutMs: options.bumpTimeoutMs ?? BUMP_TIMEOUT_MS,
      ...options,
    });
    closing.push(() => tier.stop());
    return tier;
  }

  it('carries a stream reader’s tags, each on its partition, and a heartbeat after them on every partition, to every instance', async () => {
    const tableName = `inv-${process.pid}-${++tableNo}`;
    const reader = await aBus(tableName, false, 'reader-1');
    const instances = [await aBus(tableName, true), await aBus(tableName, true)];
    const tags = ['product:p1', 'category:books', 'user:u1'];
    expect(await reader.bus.publishTags({ tags, kinds: [], everything: false })).toBe(true);
    const probe = Date.now() - 200;
    expect(await reader.bus.publishHeartbeat({ group: 'stream-lambda', tenures: [], probe })).toBe(true);
    const partitions = reader.bus.names.map((_, partition) => partition);
    for (const { heard } of instances) {
      await waitUntil(() => heard.filter((event) => event.kind === 'heartbeat').length === partitions.length, {
        timeoutMs: 5000,
        what: 'a heartbeat on every partition',
      });
      for (const partition of partitions) {
        const on = heard.filter((event) => event.partition === partition);
        const beat = { kind: 'heartbeat', from: 'reader-1', group: 'stream-lambda', tenures: [], probe, partition };
        const carried = tags.filter((tag) => partitionOf(tag) === partition);
        // The heartbeat comes after the tags it vouches for, on their channel.
        expect(on).toEqual([
          ...(carried.length > 0 ? [expect.objectContaining({ kind: 'tags', tags: carried, partition })] : []),
          beat,
        ]);
      }
    }
  });

  it('tells an instance when the node serving a partition’s channel dies, and delivers again once it is back', async () => {
    const tableName = `inv-${process.pid}-${++tableNo}`;
    const reader = await aBus(tableName, false, 'reader-2');
    const instance = await aBus(tableName, true);
    const channel = instance.bus.names[0] ?? '';
    const node = redis instanceof RedisCluster ? await redis.ownerOf(channel) : undefined;
    await (node ? node.kill() : redis.kill());
    await waitUntil(() => instance.downs().includes(0), { timeoutMs: 10_000, what: 'the subscription reported lost' });
    expect(instance.channels.health()).toBe('down');
    await (redis instanceof RedisCluster ? redis.restart(node) : redis.restart());
    await waitUntil(
      () => instance.bus.names.every((name) => instance.channels.isSubscribed(name)) && reader.channels.publisherUp,
      { timeoutMs: 30_000, intervalMs: 50, what: 'subscribed again' },
    );
    await waitUntil(
      async () => {
        await reader.bus.publishTags({ tags: ['product:after'], kinds: [], everything: false });
        return instance.heard.some((event) => event.kind === 'tags' && event.tags.includes('product:after'));
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'tags heard after the restart' },
    );
  }, 60_000);

  it('serves on one instance what another stored, and a bump makes it invalid in every partition', async () => {
    const tableName = `tier-${process.pid}-${++tableNo}`;
    const [a, b] = [aTier(tableName), aTier(tableName)];
    await Promise.all([a.start(), b.start()]);
    const keys = Array.from({ length: 40 }, (_, i) => `doc-${i}|Op|{}|public`);
    for (const [i, key] of keys.entries()) {
      const { mark } = await a.get(key);
      if (!mark) throw new Error('the tier is not readable');
      const tags = [`product:p${i % 4}`, 'category:books'];
      await a.set(key, { json: `{"n":${i}}`, etag: `"e${i}"`, tags, public: true }, mark, false);
    }
    for (const [i, key] of keys.entries()) expect((await b.get(key)).hit?.json).toBe(`{"n":${i}}`);
    // Each store is counted as stored, or as an error when Redis answered after the client's
    // command timeout (the machine busy, the cluster settling after the restart above): the
    // store may still have landed, as b's reads show. None is refused.
    expect(a.stats.stores + a.stats.errors).toBe(keys.length);
    expect(a.stats.refused).toBe(0);
    if (redis instanceof RedisCluster) {
      // The partitions spread over the primaries: every one of them holds some entries.
      const byNode = await redis.keysByNode(`tablegraph:rc:{${tableName}:p*`);
      expect([...byNode.values()].filter((found) => found.length > 0)).toHaveLength(3);
    }
    expect(await b.bump(['category:books'])).toBe(true);
    for (const key of keys) expect((await a.get(key)).hit).toBeUndefined();
    expect(a.stats.invalid).toBe(keys.length);
  });

  it('counts a bump Redis answers after the read bound as done, and keeps the tier shut while it is pending', async () => {
    const tableName = `tier-${process.pid}-${++tableNo}`;
    // The entry is stored and checked by another instance: `tier` reads at the product's bound.
    const writer = aTier(tableName);
    const tier = aTier(tableName, { timeoutMs: READ_TIMEOUT_MS });
    await Promise.all([writer.start(), tier.start()]);
    const key = 'doc-slow|Op|{}|public';
    const { mark } = await writer.get(key);
    if (!mark) throw new Error('the tier is not readable');
    await writer.set(key, { json: '{"n":1}', etag: '"e1"', tags: ['product:slow'], public: true }, mark, false);
    expect((await writer.get(key)).hit?.json).toBe('{"n":1}');
    let failed = 0;
    tier.onBumpFailed(() => failed++);
    redis.pause();
    let bumped: boolean | undefined;
    const bumping = tier.bump(['product:slow']).then((done) => (bumped = done));
    try {
      // A read sent meanwhile gives up at its own bound (a miss), while the bump still waits.
      const errors = tier.stats.errors;
      expect(await tier.get(key)).toEqual({});
      expect(tier.stats.errors).toBe(errors + 1);
      expect(bumped).toBeUndefined();
      expect(tier.readable).toBe(false);
    } finally {
      redis.resume();
    }
    // Answered well past the read bound, within the bump's: a bump that worked, no gap.
    expect(await bumping).toBe(true);
    expect(failed).toBe(0);
    expect(tier.readable).toBe(true);
    expect((await tier.get(key)).hit).toBeUndefined();
  });

  /** `count` public entries stored through `tier`, each under `tags`, spread over the partitions. */
  async function storedEntries(tier: SharedTier, name: string, count: number, tags: string[]): Promise<string[]> {
    const keys = Array.from({ length: count }, (_, i) => `${name}-${i}|Op|{}|public`);
    for (const [i, key] of keys.entries()) {
      const { mark } = await tier.get(key);
      if (!mark) throw new Error('the tier is not readable');
      await tier.set(key, { json: `{"n":${i}}`, etag: `"e${i}"`, tags, public: true }, mark, false);
    }
    return keys;
  }

  /** The first tags message `heard`, once there is one. */
  const tagsHeard = (heard: InvalidationEvent[]) =>
    waitUntil(() => heard.find((event) => event.kind === 'tags'), { timeoutMs: 5000, what: 'the tags' });

  function publisherBumps(tableName: string, timeoutMs?: number): PublisherBumps {
    const bumps = new PublisherBumps({
      redis: { ...redis.settings, signingSecret: SECRET },
      tableName,
      tagTtlMs: 60_000,
      log,
      timeoutMs,
    });
    closing.push(() => bumps.stop());
    return bumps;
  }

  it('has a stream reader bump a batch’s tags before its message goes out: the instance that hears it finds them invalid, and bumps nothing', async () => {
    const tableName = `pub-${process.pid}-${++tableNo}`;
    const [a, b] = [aTier(tableName), aTier(tableName)];
    const bumps = publisherBumps(tableName);
    await Promise.all([a.start(), b.start(), bumps.start()]);
    const keys = await storedEntries(a, 'published', 24, ['product:pub', 'category:books']);
    for (const key of keys) expect((await b.get(key)).hit).toBeDefined();
    const reader = await aBus(tableName, false, 'reader-bumps');
    const instance = await aBus(tableName, true);
    // Read the moment the message is heard, as an instance's next request would.
    const readOnHearing = new Promise<(string | undefined)[]>((resolve) =>
      instance.bus.subscribe((event) => {
        if (event.kind === 'tags' && event.tags.includes('product:pub'))
          resolve(Promise.all(keys.map(async (key) => (await b.get(key)).hit?.json)));
      }),
    );
    const output = redisInvalidations(reader.bus, 'processor', (tags) => bumps.bump(tags));
    expect(await output.tags({ tags: ['product:pub'], changedAtMs: Date.now(), traceparents: [] })).toBe(true);
    expect(await readOnHearing).toEqual(keys.map(() => undefined));
    expect(instance.heard.find((event) => event.kind === 'tags')).toMatchObject({ bumped: true });
    // Hearing it, the instance remembers the change and sends nothing: the tier is readable at once.
    b.heardBumped(['product:pub']);
    expect(b.readable).toBe(true);
    expect(bumps.failed).toBe(0);
  });

  it('serves no entry stored while a publisher’s bump of its tags runs, whichever lands first', async () => {
    const tableName = `race-${process.pid}-${++tableNo}`;
    const [a, b] = [aTier(tableName), aTier(tableName)];
    const bumps = publisherBumps(tableName);
    await Promise.all([a.start(), b.start(), bumps.start()]);
    const keys = Array.from({ length: 60 }, (_, i) => `raced-${i}|Op|{}|public`);
    // Every read begins before the bump; the stores go out with it, some before and some after.
    const marks = await Promise.all(keys.map(async (key) => (await a.get(key)).mark));
    const stores = keys.map((key, i) => async () => {
      const mark = marks[i];
      if (!mark) throw new Error('the tier is not readable');
      await a.set(key, { json: `{"old":${i}}`, etag: `"o${i}"`, tags: ['product:raced'], public: true }, mark, false);
    });
    const third = keys.length / 3;
    // A third lands before the bump (then invalid), a third races it (either way), and a third
    // goes out once it is done (refused: its read began before the bump). Which of the racing
    // stores land first is up to Redis (in a cluster, the partitions' nodes): not asserted.
    await Promise.all(stores.slice(0, third).map((store) => store()));
    const landedBefore = a.stats.stores;
    await Promise.all([...stores.slice(third, 2 * third).map((store) => store()), bumps.bump(['product:raced'])]);
    const refusedBefore = a.stats.refused + a.stats.errors;
    await Promise.all(stores.slice(2 * third).map((store) => store()));
    b.heardBumped(['product:raced']);
    for (const key of keys) expect((await b.get(key)).hit).toBeUndefined();
    expect(landedBefore).toBe(third);
    expect(a.stats.refused + a.stats.errors - refusedBefore).toBe(third);
  });

  it.each([
    // Redis reads it before the publisher's bump; the instance hears of the change meanwhile.
    ['heard of a change of its tags', (tier: SharedTier) => tier.heardBumped(['product:flight'])],
    // Redis reads it; the instance hears of a change of a whole kind (no tag version moves) or has a gap.
    ['widened an invalidation or had a gap', (tier: SharedTier) => tier.gap()],
  ])(
    'serves no entry whose look-up was under way when the instance %s, whatever the clock of its writer',
    async (_, meanwhile) => {
      const tableName = `flight-${process.pid}-${++tableNo}`;
      const [a, b] = [aTier(tableName), aTier(tableName)];
      await Promise.all([a.start(), b.start()]);
      const key = 'in-flight|Op|{}|public';
      const { mark } = await a.get(key);
      if (!mark) throw new Error('the tier is not readable');
      // Written by an instance whose clock runs ahead: its read seems to begin after anything heard here.
      const ahead = { seq: mark.seq, at: Date.now() + 30_000 };
      await a.set(key, { json: '{"n":1}', etag: '"e1"', tags: ['product:flight'], public: true }, ahead, false);
      expect((await b.get(key)).hit?.json).toBe('{"n":1}');
      redis.pause();
      let lookup: ReturnType<SharedTier['get']>;
      try {
        lookup = b.get(key);
        meanwhile(b);
      } finally {
        redis.resume();
      }
      expect((await lookup).hit).toBeUndefined();
    },
  );

  it('serves an entry stored by an instance whose clock runs ahead no longer than the maximum age since its execution began', async () => {
    const tableName = `skew-${process.pid}-${++tableNo}`;
    const [a, b] = [aTier(tableName), aTier(tableName)];
    await Promise.all([a.start(), b.start()]);
    const key = 'skewed|Op|{}|public';
    const now = Date.now.bind(Date);
    // a's clock runs 30 s ahead; its execution began 59 s ago (of the 60 s maximum age).
    const ahead = vi.spyOn(Date, 'now').mockImplementation(() => now() + 30_000);
    try {
      const { mark } = await a.get(key);
      if (!mark) throw new Error('the tier is not readable');
      const began = { seq: mark.seq, at: mark.at - 59_000 };
      await a.set(key, { json: '{"n":1}', etag: '"e1"', tags: ['product:skew'], public: true }, began, false);
    } finally {
      ahead.mockRestore();
    }
    const { hit } = await b.get(key);
    expect(hit?.json).toBe('{"n":1}');
    // By b's clock the answer seems 29 s old: what Redis keeps of it is what remains of 60 s.
    expect(hit?.ttlMs).toBeLessThanOrEqual(1000);
  });

  it('holds down an answer read from a global index from the bump as Redis dates it, whatever the clock of the publisher that bumped', async () => {
    const tableName = `held-${process.pid}-${++tableNo}`;
    const holdDownMs = 1000;
    const tier = aTier(tableName, { holdDownMs });
    const bumps = publisherBumps(tableName);
    await Promise.all([tier.start(), bumps.start()]);
    // The stream reader's clock runs three seconds behind this instance's.
    const now = Date.now.bind(Date);
    const behind = vi.spyOn(Date, 'now').mockImplementation(() => now() - 3000);
    let bumping: Promise<boolean>;
    try {
      bumping = bumps.bump(['category:held']);
    } finally {
      behind.mockRestore();
    }
    expect(await bumping).toBe(true);
    // An execution that begins after the bump and reads the category's page from its index,
    // which may not show the change yet: kept no longer than the hold-down.
    const key = 'held|Op|{}|public';
    const { mark } = await tier.get(key);
    if (!mark) throw new Error('the tier is not readable');
    await tier.set(key, { json: '{"n":1}', etag: '"e1"', tags: ['category:held'], public: true }, mark, true);
    const { hit } = await tier.get(key);
    expect(hit?.json).toBe('{"n":1}');
    expect(hit?.ttlMs).toBeLessThanOrEqual(holdDownMs);
  });

  if (mode === 'single') {
    it('sends an invalidation whose bump is late without the flag, after a bounded wait, and counts it', async () => {
      const tableName = `late-${process.pid}-${++tableNo}`;
      const reader = await aBus(tableName, false, 'reader-late');
      const instance = await aBus(tableName, true);
      const sent = performance.now();
      const never = new Promise<boolean>(() => undefined);
      expect(
        await reader.bus.publishTags({ tags: ['product:late'], kinds: [], everything: false }, { bumped: never }),
      ).toBe(true);
      expect(performance.now() - sent).toBeGreaterThanOrEqual(BUMP_WAIT_MS - 5);
      expect(await tagsHeard(instance.heard)).toMatchObject({
        tags: ['product:late'],
        bumped: false,
      });
      expect(reader.bus.notBumped.total).toBe(1);
    });
  }

  if (mode === 'cluster') {
    it('sends a batch whose bump one primary did not answer without the flag; an instance’s own bump fails there too, and it serves nothing read before', async () => {
      const cluster = redis as RedisCluster;
      const tableName = `partial-${process.pid}-${++tableNo}`;
      const tier = aTier(tableName, { bumpTimeoutMs: 300 });
      const bumps = publisherBumps(tableName, 300);
      await Promise.all([tier.start(), bumps.start()]);
      const keys = await storedEntries(tier, 'partial', 24, ['product:partial']);
      const reader = await aBus(tableName, false, 'reader-partial');
      const instance = await aBus(tableName, true);
      let failed = 0;
      tier.onBumpFailed(() => failed++);
      // The primary of one partition of the tier stops answering; the others (and the channels
      // served elsewhere) go on.
      const stopped = await cluster.ownerOf(`${cachePartitionPrefix(tableName, 0)}seq`);
      const output = redisInvalidations(reader.bus, 'processor', (tags) => bumps.bump(tags));
      stopped.pause();
      try {
        await output.tags({ tags: ['product:partial'], changedAtMs: Date.now(), traceparents: [] });
        expect(bumps.failed).toBe(1);
        // The instance bumps what it heard unflagged; the same primary fails it: a gap, no entry served.
        expect(await tier.bump(['product:partial'])).toBe(false);
        expect(failed).toBe(1);
      } finally {
        stopped.resume();
      }
      expect(await tagsHeard(instance.heard)).toMatchObject({
        tags: ['product:partial'],
        bumped: false,
      });
      for (const key of keys) expect((await tier.get(key)).hit).toBeUndefined();
    });
  }

  // What the names promise in a cluster (on one node they are only names).
  if (mode === 'cluster') {
    it('names a topic’s keys in its channel’s slot, and the shared tier’s partitions apart', async () => {
      const cluster = redis as RedisCluster;
      const channel = eventTopicChannel('MainTable', 'order:o1');
      expect(await cluster.slotOf(eventTopicHistory('MainTable', 'order:o1'))).toBe(await cluster.slotOf(channel));
      // The topics spread over the primaries.
      const topics = Array.from({ length: 30 }, (_, i) => eventTopicChannel('MainTable', `user-orders:u${i}`));
      const nodes = new Set(await Promise.all(topics.map(async (name) => (await cluster.ownerOf(name)).port)));
      expect(nodes.size).toBe(3);
      const partitions = Array.from({ length: CLUSTER_PARTITIONS }, (_, p) => cachePartitionPrefix('MainTable', p));
      const slots = await Promise.all(partitions.map((prefix) => cluster.slotOf(`${prefix}seq`)));
      expect(new Set(slots).size).toBe(CLUSTER_PARTITIONS);
      // An entry, the counter and a tag's version of one partition: one slot.
      expect(await cluster.slotOf(`${partitions[0]}t:product:p1`)).toBe(slots[0]);
      expect(await cluster.slotOf(`${partitions[0]}doc-1|Op|{}|public`)).toBe(slots[0]);
    });
  }
});
