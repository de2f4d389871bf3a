/**
 * The response cache's feed over partitioned invalidation channels, on one redis-server and on a
 * cluster of three primaries: two API instances (each a response cache with its own
 * RedisChannels, fed by feedFromRedis as the server wires it, its lease checks on DynamoDB Local)
 * and stream readers publishing as they do. Tags on every partition arrive and evict; in a
 * cluster each partition's channel is served by a primary of its own; one partition that falls
 * silent, or whose heartbeats are forged, replayed from another partition or vouch for a probe
 * out of the window, takes the feed down on every instance while the others beat, and its next
 * real heartbeat flushes; a number skipped on one partition is a gap that flushes too; a
 * consumer's heartbeat proves the feed as of its arrival, however late the lease table confirms it.
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import { invalidationPurpose, RedisInvalidationBus } from '../src/events/invalidationBus.js';
import { heartbeatBody } from '../src/events/invalidationMessages.js';
import { partitionOf } from '../src/events/invalidationPartitions.js';
import { RedisChannels } from '../src/events/redisChannels.js';
import { Sealer } from '../src/events/signedEnvelope.js';
import { LeaseCheck } from '../src/pipeline/responseCache/leaseCheck.js';
import { feedFromRedis } from '../src/pipeline/responseCache/redisFeed.js';
import { createResponseCache } from '../src/pipeline/responseCache/responseCache.js';
import type { ResponseCache } from '../src/pipeline/responseCache/responseCache.js';
import { buildSchema } from '../src/pipeline/schema/schema.js';
import { endpoint } from './support/harness.js';
import { RedisCluster } from './support/redisCluster.js';
import type { RedisServer } from './support/redisServer.js';
import { rawChannels, REDIS_MODES, startRedis } from './support/testRedis.js';
import type { TestRedis } from './support/testRedis.js';
import { waitUntil } from './support/waitUntil.js';

const SECRET = 'the-signing-secret-of-the-partitions-test-0123456789';
/** The instances' feed timeout: short, so that a silent partition shows within two seconds. */
const TIMEOUT_MS = 1500;
const BEAT_EVERY_MS = 150;
const log = pino({ level: 'silent' });
const schema = buildSchema();
let tableNo = 0;

/** A product tag on each partition, partition 0's first. */
function tagsOnEveryPartition(partitions: number): string[] {
  const found = new Map<number, string>();
  for (let i = 0; found.size < partitions; i++) {
    const tag = `product:p${i}`;
    if (!found.has(partitionOf(tag))) found.set(partitionOf(tag), tag);
  }
  return [...found.entries()].sort(([a], [b]) => a - b).map(([, tag]) => tag);
}

/** A lease check whose answers (every tenure vouched for) wait until the test confirms them. */
class HeldLeaseCheck extends LeaseCheck {
  readonly held: ((vouched: boolean) => void)[] = [];

  override vouches(): Promise<boolean> {
    return new Promise((resolve) => this.held.push(resolve));
  }

  /** Confirms every held check, and returns once the feed has acted on them. */
  async confirmAll(): Promise<void> {
    for (const confirm of this.held.splice(0)) confirm(true);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe.each(REDIS_MODES)('invalidation partitions (%s)', (mode) => {
  let redis: TestRedis;
  const closing: (() => Promise<void>)[] = [];
  const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });

  beforeAll(async () => {
    redis = await startRedis(mode);
  });

  afterAll(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await redis?.dispose();
    dynamo.client.destroy();
  });

  async function aBus(tableName: string, subscribe: boolean, from?: string): Promise<RedisInvalidationBus> {
    const channels = new RedisChannels({ ...redis.settings, signingSecret: SECRET }, { log });
    const bus = new RedisInvalidationBus({ channels, tableName, log, subscribe, from });
    await channels.start();
    closing.push(async () => {
      await bus.close();
      await channels.close();
    });
    return bus;
  }

  /** An API instance's response cache, fed from Redis as the server wires it. */
  async function anInstance(
    tableName: string,
    leases = new LeaseCheck({ doc: dynamo.doc, tableName }),
  ): Promise<{ cache: ResponseCache; bus: RedisInvalidationBus }> {
    const bus = await aBus(tableName, true);
    const cache = createResponseCache({
      schema,
      maxBytes: 1_000_000,
      maxAgeMs: 60_000,
      holdDownMs: 0,
      feedTimeoutMs: TIMEOUT_MS,
      feedPartitions: bus.names.length,
      maxAnswerBytes: 100_000,
    });
    feedFromRedis(cache, bus, leases, log);
    return { cache, bus };
  }

  /** Stores an answer filed under `tags` at `key` (the feed must be live). */
  async function store(cache: ResponseCache, key: string, tags: string[]): Promise<void> {
    const miss = await cache.lookup(key);
    if (miss.status !== 'miss') throw new Error(`expected a miss for ${key}, got ${miss.status}`);
    const stored = cache.store(
      miss,
      { data: { key } },
      { reads: { tags: new Set(tags), uncacheable: undefined, readIndex: false } },
      true,
    );
    expect(stored.outcome.reason).toBeUndefined();
  }

  const statusOf = async (cache: ResponseCache, key: string) => (await cache.lookup(key)).status;

  /**
   * A stream reader that answers feed probes on the partitions in `beating`, every
   * BEAT_EVERY_MS, signed for each partition as the bus signs; `extra` adds messages of the
   * test's own to each round (given the messages the round sent, by partition).
   */
  async function aBeater(tableName: string, names: readonly string[]) {
    const publisher = await rawChannels(redis);
    const sealers = names.map(
      (_, partition) => new Sealer(invalidationPurpose(tableName, partition), SECRET, 'reader-beats'),
    );
    const beating = new Set(names.map((_, partition) => partition));
    const extra: ((sent: Map<number, string>) => [number, string][])[] = [];
    let round = 0;
    const beatOn = (partition: number, probe = Date.now()) =>
      (sealers[partition] as Sealer).seal(heartbeatBody({ group: 'stream-lambda', tenures: [], probe }));
    const timer = setInterval(() => {
      round++;
      const sent = new Map([...beating].map((partition) => [partition, beatOn(partition)]));
      const messages = [...sent.entries(), ...extra.flatMap((more) => more(sent))];
      for (const [partition, message] of messages)
        void publisher.publish(names[partition] ?? '', message).catch(() => undefined);
    }, BEAT_EVERY_MS);
    closing.push(async () => {
      clearInterval(timer);
      await publisher.close();
    });
    return { beating, extra, beatOn, rounds: () => round };
  }

  it('carries tags on every partition to every instance and evicts them there; in a cluster each partition is on a primary of its own', async () => {
    const tableName = `parts-${process.pid}-${++tableNo}`;
    const instances = [await anInstance(tableName), await anInstance(tableName)];
    const { names } = instances[0]?.bus as RedisInvalidationBus;
    if (redis instanceof RedisCluster) {
      const cluster = redis;
      const owners = await Promise.all(names.map(async (name) => (await cluster.ownerOf(name)).port));
      expect(new Set(owners).size).toBe(3);
    }
    await aBeater(tableName, names);
    for (const { cache } of instances) await waitUntil(() => cache.feed.live, { timeoutMs: 5000, what: 'a live feed' });
    const tags = tagsOnEveryPartition(names.length);
    for (const { cache } of instances) for (const tag of tags) await store(cache, `key-${tag}`, [tag]);
    for (const { cache } of instances) for (const tag of tags) expect(await statusOf(cache, `key-${tag}`)).toBe('hit');
    const reader = await aBus(tableName, false, 'reader-tags');
    expect(await reader.publishTags({ tags, kinds: [], everything: false })).toBe(true);
    for (const { cache } of instances) {
      await waitUntil(
        async () => (await Promise.all(tags.map((tag) => statusOf(cache, `key-${tag}`)))).every((s) => s === 'miss'),
        { timeoutMs: 5000, what: 'every tag evicted' },
      );
      expect(cache.feed.live).toBe(true);
    }
  });

  it('takes the feed down on every instance while one partition is silent, forged, replayed or out of the window, and flushes when it beats again', async () => {
    const tableName = `parts-${process.pid}-${++tableNo}`;
    const instances = [await anInstance(tableName), await anInstance(tableName)];
    const { names } = instances[0]?.bus as RedisInvalidationBus;
    const beater = await aBeater(tableName, names);
    for (const { cache } of instances) await waitUntil(() => cache.feed.live, { timeoutMs: 5000, what: 'a live feed' });
    for (const { cache } of instances) await store(cache, 'key-1', ['product:p1']);

    // Partition 1 falls silent, but for heartbeats that must not count: partition 0's heartbeat
    // replayed on its channel, one signed with another secret, and a real one for a probe older
    // than the timeout.
    const silent = 1;
    const guessed = new Sealer(invalidationPurpose(tableName, silent), `${SECRET}-guessed`, 'reader-beats');
    const wrong = (sent: Map<number, string>): [number, string][] => [
      [silent, sent.get(0) ?? ''],
      [silent, guessed.seal(heartbeatBody({ group: 'stream-lambda', tenures: [], probe: Date.now() }))],
      [silent, beater.beatOn(silent, Date.now() - 2 * TIMEOUT_MS)],
    ];
    beater.beating.delete(silent);
    beater.extra.push(wrong);
    for (const { cache } of instances) {
      await waitUntil(() => !cache.feed.live, { timeoutMs: TIMEOUT_MS + 2000, what: 'the feed down' });
      expect(await statusOf(cache, 'key-1')).toBe('bypass');
    }
    // Several rounds later it is still down, the other partitions live, every wrong heartbeat refused.
    const from = beater.rounds();
    await waitUntil(() => beater.rounds() >= from + 6, { timeoutMs: 5000, what: 'six more rounds' });
    for (const { cache, bus } of instances) {
      expect([cache.feed.live, ...names.map((_, p) => cache.feed.partitionLive(p))]).toEqual([
        false,
        true,
        false,
        true,
      ]);
      expect(bus.refusals.byReason.get('forged')).toBeGreaterThanOrEqual(2 * 6);
      expect(cache.stats.unvouchedBeats).toBeGreaterThanOrEqual(6);
    }

    // It beats again: live on every instance, and what was stored before is gone.
    beater.extra.splice(0);
    beater.beating.add(silent);
    for (const { cache } of instances) {
      await waitUntil(() => cache.feed.live, { timeoutMs: 5000, what: 'the feed live again' });
      expect(await statusOf(cache, 'key-1')).toBe('miss');
    }
  });

  it("dates a consumer's heartbeat from its arrival: one the lease table confirms only after the timeout proves nothing", async () => {
    const tableName = `parts-${process.pid}-${++tableNo}`;
    const leases = new HeldLeaseCheck({ doc: dynamo.doc, tableName });
    const instance = await anInstance(tableName, leases);
    const { names } = instance.bus;
    const publisher = await rawChannels(redis);
    closing.push(() => publisher.close());
    const sealers = names.map(
      (_, partition) => new Sealer(invalidationPurpose(tableName, partition), SECRET, 'consumer-1'),
    );
    const beat = async () => {
      const body = heartbeatBody({ group: 'processor', tenures: [{ shardId: 'shard-1', epoch: 1 }] });
      for (const [partition, name] of names.entries())
        await publisher.publish(name, (sealers[partition] as Sealer).seal(body));
      await waitUntil(() => leases.held.length === names.length, {
        timeoutMs: 5000,
        what: 'every heartbeat being checked',
      });
    };

    // Checks that outlast the feed timeout: each heartbeat's proof is too old once confirmed.
    await beat();
    const arrived = Date.now();
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 200 - (Date.now() - arrived)));
    await leases.confirmAll();
    expect(instance.cache.feed.live).toBe(false);

    // Checks answered at once: the same heartbeats make it live.
    await beat();
    await leases.confirmAll();
    expect(instance.cache.feed.live).toBe(true);
  });

  it('refuses a heartbeat captured on another table’s channel and replayed on this one, though both tables share the secret', async () => {
    const [other, own] = [`parts-${process.pid}-${++tableNo}`, `parts-${process.pid}-${++tableNo}`];
    const instance = await anInstance(own);
    const { names } = instance.bus;
    // The other table's stream reader answers a probe; everything it sends is captured as sent.
    const reader = await aBus(other, false, 'reader-other');
    const capture = await rawChannels(redis);
    const relay = await rawChannels(redis);
    closing.push(
      () => capture.close(),
      () => relay.close(),
    );
    const captured: [number, Buffer][] = [];
    for (const [partition, name] of reader.names.entries())
      capture.listen(name, { message: (raw) => void captured.push([partition, raw]) });
    await waitUntil(() => reader.names.every((name) => capture.isSubscribed(name)), {
      timeoutMs: 5000,
      what: 'the capture subscribed',
    });
    for (let round = 0; round < 4; round++) {
      const sent = captured.length;
      expect(await reader.publishHeartbeat({ group: 'stream-lambda', tenures: [], probe: Date.now() })).toBe(true);
      await waitUntil(() => captured.length === sent + names.length, { timeoutMs: 5000, what: 'every beat captured' });
      // Relayed on this table's channel of the same partition, as anyone who can publish there could.
      for (const [partition, raw] of captured.slice(sent)) await relay.publish(names[partition] ?? '', raw.toString());
    }
    await waitUntil(() => (instance.bus.refusals.byReason.get('forged') ?? 0) >= 4 * names.length, {
      timeoutMs: 5000,
      what: 'every relayed beat refused',
    });
    expect(instance.cache.feed.live).toBe(false);
  });

  if (mode === 'single') {
    it('flushes every instance when a stream reader could not send a message, its connection down a moment, though other readers kept the feed live', async () => {
      const tableName = `parts-${process.pid}-${++tableNo}`;
      const instance = await anInstance(tableName);
      const { names } = instance.bus;
      await aBeater(tableName, names);
      await waitUntil(() => instance.cache.feed.live, { timeoutMs: 5000, what: 'a live feed' });
      const tag = 'product:lost';
      await store(instance.cache, 'key-lost', [tag]);
      expect(await statusOf(instance.cache, 'key-lost')).toBe('hit');

      // A second reader, its first message not sent yet, whose publishing connection is cut: it
      // reconnects two seconds later.
      const admin = new Redis((redis as RedisServer).port, { lazyConnect: true });
      closing.push(async () => void admin.disconnect());
      const publishers = async () =>
        new Set(
          String(await admin.client('LIST'))
            .split('\n')
            .filter((line) => line.includes('name=tablegraph-publisher'))
            .map((line) => /id=(\d+)/.exec(line)?.[1] ?? ''),
        );
      const before = await publishers();
      const channels = new RedisChannels(
        { ...redis.settings, signingSecret: SECRET },
        { log, backoff: { baseDelayMs: 2000, maxDelayMs: 2000 } },
      );
      const reader = new RedisInvalidationBus({ channels, tableName, log, subscribe: false, from: 'reader-cut' });
      await channels.start();
      closing.push(async () => {
        await reader.close();
        await channels.close();
      });
      const [id] = [...(await publishers())].filter((found) => !before.has(found));
      await admin.client('KILL', 'ID', id ?? '');
      await waitUntil(() => !channels.publisherUp, { timeoutMs: 2000, intervalMs: 0, what: 'the reader cut off' });
      // The change's tags cannot go out; the other reader's heartbeats keep every partition live.
      expect(await reader.publishTags({ tags: [tag], kinds: [], everything: false })).toBe(false);
      await waitUntil(() => channels.publisherUp, { timeoutMs: 10_000, what: 'the reader back' });
      expect(await reader.publishHeartbeat({ group: 'stream-lambda', tenures: [], probe: Date.now() })).toBe(true);
      await waitUntil(async () => (await statusOf(instance.cache, 'key-lost')) !== 'hit', {
        timeoutMs: 5000,
        what: 'the answer the lost tags named no longer served',
      });
      expect(instance.cache.feed.live).toBe(true);
      expect(reader.lossesTold).toBe(1);
      // Counted as the publisher's loss, not as a tag widened (tablegraph_response_cache_faults_total).
      expect(instance.cache.stats).toMatchObject({ publisherLosses: 1, widened: 0 });
    });
  }

  it('takes a number skipped on one partition as a gap: the heartbeat after it flushes', async () => {
    const tableName = `parts-${process.pid}-${++tableNo}`;
    const instance = await anInstance(tableName);
    const { names } = instance.bus;
    const beater = await aBeater(tableName, names);
    await waitUntil(() => instance.cache.feed.live, { timeoutMs: 5000, what: 'a live feed' });
    await store(instance.cache, 'key-2', ['product:p2']);
    // A message of partition 2 sealed and never sent (as a publish that failed on its way).
    beater.beatOn(2);
    await waitUntil(() => instance.bus.refusals.byReason.get('sequence-gap') === 1, {
      timeoutMs: 5000,
      what: 'the gap noticed',
    });
    expect(instance.cache.feed.live).toBe(true);
    expect(await statusOf(instance.cache, 'key-2')).toBe('miss');
  });
});
