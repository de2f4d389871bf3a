/**
 * Change events on a real redis-server and on a real cluster of three primaries (sharded
 * pub/sub): what an instance does with messages it must not trust (malformed, oversized,
 * forged, replayed), what a publisher refuses to send, and once-only delivery to a subscriber
 * across a replayed event and a Redis restart (the whole cluster's, in cluster mode). Raw
 * messages are sent unsigned on the channel, as anyone who can reach Redis could.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeEvent } from '../src/events/eventSchema.js';
import { Sealer } from '../src/events/signedEnvelope.js';
import type { ChangeEvent, ChangeEventOf } from '../src/events/changeEvent.js';
import { eventTopicChannel, eventTopicHistory } from '../src/events/redisEventBus.js';
import type { RedisEventBus } from '../src/events/redisEventBus.js';
import { EventFanOut } from '../src/graphql/eventFanOut.js';
import { anOrderEvent } from './support/factories.js';
import { waitUntil } from './support/waitUntil.js';
import type { RedisChannels } from '../src/events/redisChannels.js';
import { openEventBus } from './support/redisBus.js';
import { rawChannels, REDIS_MODES, startRedis } from './support/testRedis.js';
import type { TestRedis } from './support/testRedis.js';

const SECRET = 'the-signing-secret-of-this-test-file-0123456789';
const AT = '2026-06-01T12:00:00.000Z';
let redis: TestRedis;
let raw: RedisChannels;
const closing: (() => Promise<void>)[] = [];
let tableNo = 0;

const anEvent = (seq: string, userId = 'alice'): ChangeEventOf<'Order'> =>
  anOrderEvent(
    {
      kind: 'Order',
      orderId: `order-${seq}`,
      userId,
      status: 'PLACED',
      placedAt: AT,
      updatedAt: AT,
      items: [{ productId: 'book-1', productName: 'A book', unitPriceCents: 1999, quantity: 1 }],
      totalCents: 1999,
      version: 1,
    },
    seq,
  );

/** The topic the instances here listen to: alice's orders (every event below is one, unless mallory's). */
const ALICES = 'user-orders:alice';

/** A bus on a table (channels) of its own, listening to ALICES unless it only publishes, its warnings recorded. */
async function aBus(options: { signingSecret?: string; tableName?: string; subscribe?: boolean } = {}) {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const infos: string[] = [];
  const log = {
    debug: () => undefined,
    info: (_: unknown, msg: string) => void infos.push(msg),
    error: () => undefined,
    warn: (fields: Record<string, unknown>, msg: string) => void warnings.push({ fields, msg }),
  };
  const tableName = options.tableName ?? `events-${process.pid}-${++tableNo}`;
  const bus = await openEventBus({ ...redis.settings, signingSecret: options.signingSecret }, tableName, {
    log: log as never,
    subscribe: options.subscribe,
    watch: options.subscribe === false ? [] : [ALICES],
  });
  closing.push(() => bus.close());
  return { bus, warnings, infos, channel: eventTopicChannel(tableName, ALICES), tableName };
}

/** Resolves with the first event `bus` hands its listeners that satisfies `match`. */
const next = (bus: RedisEventBus, match: (event: ChangeEvent) => boolean) =>
  new Promise<ChangeEvent>((resolve) => {
    const stop = bus.subscribe((event) => {
      if (!match(event)) return;
      stop();
      resolve(event);
    });
  });

describe.each(REDIS_MODES)('an API instance on Redis (%s)', (mode) => {
  beforeAll(async () => {
    redis = await startRedis(mode);
    raw = await rawChannels(redis);
  });

  afterAll(async () => {
    for (const close of closing.splice(0)) await close();
    await raw?.close();
    await redis?.dispose();
  });

  it('drops malformed, forged-shaped and oversized messages, counts them, and warns once however many listeners', async () => {
    const { bus, warnings, channel, tableName } = await aBus();
    const heard: ChangeEvent[][] = [[], [], []];
    for (const list of heard) bus.subscribe((event) => void list.push(event));
    const sealer = new Sealer('change-event', undefined, 'mallory');
    const bad = [
      () => 'not an envelope',
      () => sealer.seal('not json'),
      () => sealer.seal('{"entity":"Order","node":{"orderId":"x"}}'),
      () => sealer.seal(JSON.stringify({ ...anEvent('1'), seq: undefined })),
      () => sealer.seal(JSON.stringify({ ...anEvent('2'), node: { orderId: 'a#b' } })),
      () => sealer.seal('[]'),
    ];
    for (let i = 0; i < 4; i++) for (const message of bad) await raw.publish(channel, message());
    // 200,000 lines, 14 MB: refused by its size before it is parsed.
    const huge = anEvent('3');
    huge.node.items = Array.from({ length: 200_000 }, () => huge.node.items[0]!);
    await raw.publish(channel, sealer.seal(JSON.stringify(huge)));
    const sentAt = performance.now();
    const good = next(bus, (event) => event.seq === '4');
    await raw.publish(channel, sealer.seal(encodeEvent(anEvent('4'), tableName)));
    await good;
    console.info(
      `a 14 MB message rejected, the next event received ${(performance.now() - sentAt).toFixed(1)} ms later`,
    );
    expect(bus.rejected).toBe(4 * bad.length + 1);
    expect(Object.fromEntries(bus.refusals.byReason)).toEqual({ malformed: 4, invalid: 20, 'too-large': 1 });
    const rejections = warnings.filter((w) => w.msg.includes('refused'));
    expect(rejections).toHaveLength(1);
    expect(rejections[0]?.fields).toMatchObject({ reason: 'malformed', refused: 1 });
    expect(heard.map((list) => list.map((event) => event.seq))).toEqual([['4'], ['4'], ['4']]);
  });

  it('says once that it connected, and never that it disconnected, when Redis is up from the start', async () => {
    const { bus, warnings, infos } = await aBus();
    expect(bus.health().status).toBe('up');
    // Clients start listening to 50 more topics at once: joining them is not losing Redis.
    const topics = Array.from({ length: 50 }, (_, i) => `order:joined-${i}`);
    const joined = topics.map(
      (topic) => new Promise<void>((resolve) => bus.watch(topic, { subscribed: () => resolve() })),
    );
    expect(bus.health().status).toBe('up');
    await Promise.all(joined);
    expect(infos.filter((msg) => msg.includes('redis'))).toEqual(['redis connected']);
    expect(warnings).toEqual([]);
  });

  it('never publishes an event past its bounds: counted as lost, nothing sent', async () => {
    const { bus, tableName } = await aBus();
    const { bus: listener } = await aBus({ tableName });
    const received: string[] = [];
    listener.subscribe((event) => void received.push(event.seq));
    const big = anEvent('10');
    big.node.items = Array.from({ length: 101 }, () => big.node.items[0]!);
    const good = next(listener, (event) => event.seq === '11');
    await bus.publish(big);
    await bus.publish(anEvent('11'));
    await good;
    expect(bus.lost).toBe(1);
    expect(received).toEqual(['11']);
  });

  it('with REDIS_SIGNING_SECRET, delivers what its publishers sign and drops what anyone else sends', async () => {
    const { bus: publisher, tableName } = await aBus({ signingSecret: SECRET, subscribe: false });
    const { bus, channel } = await aBus({ signingSecret: SECRET, tableName });
    const received: ChangeEvent[] = [];
    bus.subscribe((event) => void received.push(event));
    // A valid event for mallory's benefit, unsigned, or signed with a guessed key, 100 times each.
    const unsigned = new Sealer('change-event', undefined, 'mallory');
    const guessed = new Sealer('change-event', 'a-guessed-secret-of-32-characters-or-more', 'mallory');
    for (let i = 0; i < 100; i++) {
      await raw.publish(channel, unsigned.seal(encodeEvent(anEvent(`2${i}`, 'mallory'), tableName)));
      await raw.publish(channel, guessed.seal(encodeEvent(anEvent(`3${i}`, 'mallory'), tableName)));
    }
    const signed = next(bus, (event) => event.seq === '22');
    await publisher.publish(anEvent('22'));
    await signed;
    expect(received.map((event) => event.seq)).toEqual(['22']);
    expect(Object.fromEntries(bus.refusals.byReason)).toEqual({ unsigned: 100, forged: 100 });
  });

  it("refuses an event that another table's publisher signed with the same secret, copied live or into the history", async () => {
    const { bus: elsewhere, tableName: otherTable } = await aBus({ signingSecret: SECRET, subscribe: false });
    const { bus: publisher, tableName, channel } = await aBus({ signingSecret: SECRET, subscribe: false });
    const { bus } = await aBus({ signingSecret: SECRET, tableName });
    const received: string[] = [];
    bus.subscribe((event) => void received.push(event.seq));
    await elsewhere.publish(anEvent('60'));
    const [copied] = (await raw.history(eventTopicHistory(otherTable, ALICES))).map(String);
    expect(copied).toBeDefined();
    // Onto this table's topic: its history and its channel, as anyone who can reach Redis could.
    await raw.append(eventTopicHistory(tableName, ALICES), channel, copied!, 100, 60);
    const marker = next(bus, (event) => event.seq === '61');
    await publisher.publish(anEvent('61'));
    await marker;
    expect(received).toEqual(['61']);
    expect((await bus.history(ALICES)).map((event) => event.seq)).toEqual(['61']);
    // Refused by its body (the signature holds): once live, once in the history.
    expect(Object.fromEntries(bus.refusals.byReason)).toEqual({ invalid: 2 });
  });

  it('never delivers a captured signed event again: not to a running instance, not to one that just restarted', async () => {
    const { bus: publisher, tableName, channel } = await aBus({ signingSecret: SECRET, subscribe: false });
    const { bus: running } = await aBus({ signingSecret: SECRET, tableName });
    const captured: string[] = [];
    closing.push(async () => stopCapture());
    const stopCapture = raw.listen(channel, { message: (message) => void captured.push(message.toString()) });
    await waitUntil(() => raw.isSubscribed(channel), { timeoutMs: 5000, what: 'the capture subscribed' });
    const seqs: string[] = [];
    running.subscribe((event) => void seqs.push(event.seq));
    const delivered = next(running, (event) => event.seq === '40');
    await publisher.publish(anEvent('40', 'alice'));
    await delivered;
    await waitUntil(() => captured.length === 1, { timeoutMs: 5000, what: 'the message captured' });
    // A new instance subscribes after the capture was made: what was sent before is not for it.
    const { bus: restarted } = await aBus({ signingSecret: SECRET, tableName });
    const afterRestart: string[] = [];
    restarted.subscribe((event) => void afterRestart.push(event.seq));
    for (let i = 0; i < 100; i++) await raw.publish(channel, captured[0]!);
    const marker = Promise.all([next(running, (e) => e.seq === '41'), next(restarted, (e) => e.seq === '41')]);
    await publisher.publish(anEvent('41'));
    await marker;
    expect(seqs).toEqual(['40', '41']);
    expect(afterRestart).toEqual(['41']);
    expect(running.refusals.byReason.get('replayed')).toBe(100);
    expect(restarted.refusals.byReason.get('stale')).toBe(100);
  });

  it('delivers each change once to a subscriber across a replayed publish, then ends it with EVENTS_MISSED when Redis restarts without its history', async () => {
    const { bus: publisher, tableName } = await aBus({ subscribe: false });
    const { bus } = await aBus({ tableName });
    const events = new EventFanOut(bus, 100);
    const subscription = events.subscribe({ topic: ALICES });
    const seqs: string[] = [];
    const received = (async () => {
      for await (const event of subscription) seqs.push(event.seq);
    })().then(
      () => 'completed',
      (error: { extensions?: { code?: string } }) => error.extensions?.code,
    );
    await publisher.publish(anEvent('30'));
    // A consumer fail-over or a checkpoint replay publishes the same record again.
    await publisher.publish(anEvent('30'));
    await waitUntil(() => events.duplicates === 1, { timeoutMs: 5000, what: 'the repeat received and dropped' });
    const killedAt = performance.now();
    await redis.kill();
    await redis.restart();
    // Restarted without persistence, the topic's history no longer holds '30': what was
    // published meanwhile cannot be proven empty, and the stream says so rather than go on.
    expect(await received).toBe('EVENTS_MISSED');
    expect(performance.now() - killedAt).toBeLessThan(5000);
    expect(seqs).toEqual(['30']);
    expect(events.subscriberCount).toBe(0);
    events.detach();
  });

  it('opens a subscription once its topic is subscribed, so an event published as soon as it is open is heard', async () => {
    const { bus: publisher, tableName } = await aBus({ subscribe: false });
    const { bus } = await aBus({ tableName });
    const events = new EventFanOut(bus, 100);
    const subscription = await events.open({ topic: 'user-orders:bob' });
    expect(events.subscribedTopicCount).toBe(1);
    await publisher.publish(anEvent('70', 'bob'));
    expect((await subscription.next()).value?.seq).toBe('70');
    await subscription.return?.();
    events.detach();
  });

  it('opens a subscription while Redis is down after a bounded wait, and delivers to it once Redis is back', async () => {
    const { bus: publisher, tableName } = await aBus({ subscribe: false });
    const { bus } = await aBus({ tableName });
    const events = new EventFanOut(bus, 100);
    await redis.kill();
    const subscription = await events.open({ topic: 'user-orders:carol' });
    expect(events.subscribedTopicCount).toBe(0);
    const heard: string[] = [];
    let ended: Error | undefined;
    const reading = (async () => {
      for await (const event of subscription) heard.push(event.seq);
    })().catch((error: Error) => (ended = error));
    await redis.restart();
    await waitUntil(() => events.subscribedTopicCount === 1, { timeoutMs: 15_000, what: 'the topic subscribed' });
    // Pub/sub delivers what is published once both ends are connected: an event a moment too
    // early (the publisher's own connection still coming back) is lost, so publish until one is heard.
    let n = 0;
    await waitUntil(
      async () => {
        if (ended) throw new Error(`the subscription ended: ${ended.message}`);
        await publisher.publish(anEvent(`8${n++}`, 'carol'));
        return heard.length > 0;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'an event heard after Redis came back' },
    );
    expect(heard[0]).toMatch(/^8\d+$/);
    await subscription.return?.();
    await reading;
    events.detach();
  }, 40_000);

  it('catches an open subscription up when its Redis subscription is cut: what was published meanwhile arrives first, in order and once', async () => {
    const { bus: publisher, tableName } = await aBus({ subscribe: false });
    const { bus } = await aBus({ tableName });
    const events = new EventFanOut(bus, 100);
    const subscription = events.subscribe({ topic: ALICES });
    const seqs: string[] = [];
    const received = (async () => {
      for await (const event of subscription) {
        seqs.push(event.seq);
        if (seqs.includes('54')) return;
      }
    })();
    await publisher.publish(anEvent('50'));
    await waitUntil(() => seqs.includes('50'), { timeoutMs: 5000, what: 'the first event heard' });
    // Published the moment the subscription is found lost, before it can be back: only the
    // history holds them (or, should the subscription be quicker, they are heard live).
    const stop = bus.watch(ALICES, {
      lost: () => {
        stop();
        void (async () => {
          for (const seq of ['51', '52', '53']) await publisher.publish(anEvent(seq));
        })();
      },
    });
    await cutSubscriptions();
    await waitUntil(() => bus.health().status === 'up' && seqs.includes('53'), {
      timeoutMs: 5000,
      intervalMs: 20,
      what: 'the missed events delivered',
    });
    await publisher.publish(anEvent('53'));
    await publisher.publish(anEvent('54'));
    await received;
    expect(seqs).toEqual(['50', '51', '52', '53', '54']);
    events.detach();
  });
});

/** Closes every pub/sub connection on every node (CLIENT KILL TYPE pubsub): the data stays. */
async function cutSubscriptions(): Promise<void> {
  const ports = 'nodes' in redis ? redis.nodes.map((node) => node.port) : [redis.port];
  for (const port of ports) {
    const client = new Redis(port, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    await client.client('KILL', 'TYPE', 'pubsub');
    client.disconnect();
  }
}
