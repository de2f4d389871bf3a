/**
 * Change events routed by topic, on a real redis-server and on a real cluster of three primaries
 * (sharded pub/sub): two API instances and a standalone consumer as child processes, real
 * Server-Sent Events clients over HTTP. An instance receives only the topics its clients listen
 * to; a client that drops and reconnects to the other instance with `Last-Event-ID` gets every
 * event it missed from the topic's history in Redis, in order and once, then the live ones; when
 * the history no longer holds its id, it is told (`EVENTS_MISSED`). An open subscription whose
 * Redis goes away (the server restarted, the topic's primary killed) ends with `EVENTS_MISSED`
 * within 5 s when what it missed is lost with Redis, over SSE and over graphql-ws alike.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { pino } from 'pino';
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { openRedis } from '../src/events/redisConnection.js';
import { eventTopicChannel, eventTopicHistory } from '../src/events/redisEventBus.js';
import { compareSeq } from '../src/graphql/eventFanOut.js';
import { TOPICS } from '../src/table/entities/topics.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { aProduct, aUser, orderIdOf, store } from './support/factories.js';
import { health, metric, readyDetails } from './support/fanOut.js';
import { endpoint, tokenFor } from './support/harness.js';
import { postGraphQL } from './support/load.js';
import { openEventBus } from './support/redisBus.js';
import type { OpenedEventBus } from './support/redisBus.js';
import { SseStream } from './support/sseStream.js';
import { REDIS_MODES, startRedis } from './support/testRedis.js';
import type { TestRedis } from './support/testRedis.js';
import { waitUntil } from './support/waitUntil.js';
import { PLACE_ORDER } from './support/writes.js';

const DELIVERIES = 'tablegraph_event_bus_delivery_seconds_count';

describe.each(REDIS_MODES)('change events by topic (%s)', (mode) => {
  const children = new ChildServers();
  const alice = aUser();
  const product = aProduct({ stock: 100_000 });
  let redis: TestRedis;
  let dynamo: Dynamo;
  let tableName: string;
  let apis: [ChildServer, ChildServer];
  let consumer: ChildServer;
  let admin: string;
  let aliceToken: string;
  /** The test's own listener to alice's topic: when it has an event, Redis published it. */
  let probe: OpenedEventBus;
  const heard = new Set<string>();

  beforeAll(async () => {
    admin = `Bearer ${await tokenFor('topics-admin', 'admin')}`;
    aliceToken = await tokenFor(alice.userId);
    tableName = `topics-${randomUUID()}`;
    dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
    [redis] = await Promise.all([startRedis(mode), ensureTable(dynamo.client, tableName, endpoint())]);
    await store(dynamo.doc, tableName, { users: [alice], products: [product] });
    const env = { ...redis.env, STREAM_CONSUMER: 'false' };
    const [first, second, third] = await Promise.all([
      children.start(endpoint(), tableName, env),
      children.start(endpoint(), tableName, env),
      children.startConsumer(endpoint(), tableName, { ...redis.env, STREAM_POLL_MS: '50' }),
    ]);
    apis = [first, second];
    consumer = third;
    probe = await openEventBus(redis.settings, tableName, { watch: [TOPICS.userOrders.of(alice.userId)] });
    probe.subscribe((event) => void heard.add(orderIdOf(event) ?? ''));
  });

  afterAll(async () => {
    await probe?.close();
    await children.killAll();
    await redis?.dispose();
    if (tableName) await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
    dynamo?.client.destroy();
  });

  async function placeOrder(): Promise<string> {
    const result = await postGraphQL(apis[1].url, admin, PLACE_ORDER, {
      input: {
        userId: alice.userId,
        idempotencyKey: randomUUID(),
        items: [{ productId: product.productId, quantity: 1 }],
      },
    });
    const orderId = (result.body?.data as { placeOrder?: { order?: { orderId: string } } } | undefined)?.placeOrder
      ?.order?.orderId;
    if (!orderId) throw new Error(`placeOrder failed: ${JSON.stringify(result.body ?? result.failure)}`);
    return orderId;
  }

  /** The next `count` events of `stream`: their order ids and event ids, in the order they came. */
  async function read(stream: SseStream, count: number): Promise<{ orderIds: string[]; ids: string[] }> {
    const orderIds: string[] = [];
    const ids: string[] = [];
    while (orderIds.length < count) {
      const event = await stream.next();
      if (event.event !== 'next') throw new Error(`expected an event, got ${event.event}: ${event.data}`);
      const data = JSON.parse(event.data) as { data?: { orderEvents: { order: { orderId: string } } } };
      if (!data.data) throw new Error(`expected data, got ${event.data}`);
      orderIds.push(data.data.orderEvents.order.orderId);
      ids.push(event.id ?? '');
    }
    return { orderIds, ids };
  }

  const subscribedTopics = (api: ChildServer, count: number) =>
    waitUntil(async () => (await metric(api, 'tablegraph_event_bus_topics')) === count, {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: `${count} topic(s) subscribed`,
    });

  const increasing = (ids: string[]) => ids.every((id, i) => i === 0 || compareSeq(ids[i - 1] as string, id) < 0);

  let lastId: string;
  let stream: SseStream;

  it('sends a topic only to the instances where a client listens, in the order the orders were placed', async () => {
    stream = await SseStream.open(apis[0].url, aliceToken);
    await subscribedTopics(apis[0], 1);
    expect(await metric(apis[1], 'tablegraph_event_bus_topics')).toBe(0);
    const before = await Promise.all(apis.map((api) => metric(api, DELIVERIES)));
    // Three orders one after another: one batch of the stream, or several.
    const placed = [await placeOrder(), await placeOrder(), await placeOrder()];
    const received = await read(stream, 3);
    expect(received.orderIds).toEqual(placed);
    expect(increasing(received.ids)).toBe(true);
    await waitUntil(() => placed.every((orderId) => heard.has(orderId)), { timeoutMs: 10_000, what: 'the probe' });
    const after = await Promise.all(apis.map((api) => metric(api, DELIVERIES)));
    console.info(
      `${mode}: messages received for 3 orders: the listening instance ${after[0]! - before[0]!}, the idle one ${after[1]! - before[1]!}`,
    );
    expect(after[0]! - before[0]!).toBe(3);
    expect(after[1]! - before[1]!).toBe(0);
    lastId = received.ids[2] as string;
  });

  it('resumes a dropped client on the other instance from the topic’s history: each missed event once, in order, then live', async () => {
    stream.close();
    await subscribedTopics(apis[0], 0);
    const away = [await placeOrder(), await placeOrder()];
    await waitUntil(() => away.every((orderId) => heard.has(orderId)), { timeoutMs: 10_000, what: 'the probe' });
    const startedAt = performance.now();
    const resumed = await SseStream.open(apis[1].url, aliceToken, lastId);
    const missed = await read(resumed, 2);
    const resumeMs = performance.now() - startedAt;
    expect(missed.orderIds).toEqual(away);
    expect(increasing([lastId, ...missed.ids])).toBe(true);
    const live = [await placeOrder(), await placeOrder()];
    const after = await read(resumed, 2);
    expect(after.orderIds).toEqual(live);
    console.info(`${mode}: resumed on another instance, 2 missed events received in ${resumeMs.toFixed(0)} ms`);
    lastId = after.ids[1] as string;
    resumed.close();
    await subscribedTopics(apis[1], 0);
  });

  it('answers EVENTS_MISSED when the history no longer holds Last-Event-ID, then goes on live', async () => {
    // Redis lost the topic's history (a restart without persistence, an eviction, its expiry).
    const client = openRedis(redis.settings, { role: 'publisher', log: pino({ level: 'silent' }) });
    try {
      await client.connect();
      expect(await client.del(eventTopicHistory(tableName, TOPICS.userOrders.of(alice.userId)))).toBe(1);
    } finally {
      client.disconnect();
    }
    const resumed = await SseStream.open(apis[0].url, aliceToken, lastId);
    const signal = await resumed.next();
    expect(JSON.parse(signal.data).errors[0].extensions.code).toBe('EVENTS_MISSED');
    const orderId = await placeOrder();
    expect((await read(resumed, 1)).orderIds).toEqual([orderId]);
    resumed.close();
  });

  /** An open subscription to alice's orders on `api`: each order id it hears, or the code that ended it. */
  async function openOver(transport: 'SSE' | 'graphql-ws', api: ChildServer) {
    if (transport === 'SSE') {
      const sse = await SseStream.open(api.url, aliceToken);
      return {
        next: async (): Promise<string> => {
          const event = await sse.next();
          if (event.event === 'complete') return 'complete';
          const data = JSON.parse(event.data) as {
            data?: { orderEvents: { order: { orderId: string } } };
            errors?: { extensions?: { code?: string } }[];
          };
          return data.data?.orderEvents.order.orderId ?? data.errors?.[0]?.extensions?.code ?? event.event;
        },
        close: () => sse.close(),
      };
    }
    const client: Client = createClient({
      url: api.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${aliceToken}` },
      retryAttempts: 0,
    });
    const iterator = client.iterate<{ orderEvents: { order: { orderId: string } } }>({
      query: 'subscription { orderEvents { type order { orderId } } }',
    });
    return {
      next: () =>
        iterator.next().then(
          (result) => (result.done ? 'complete' : (result.value.data?.orderEvents.order.orderId ?? 'no data')),
          (errors: { extensions?: { code?: string } }[]) => errors[0]?.extensions?.code ?? 'error',
        ),
      close: () => void client.dispose(),
    };
  }

  it.each(['SSE', 'graphql-ws'] as const)(
    'ends an open %s subscription with EVENTS_MISSED within 5 s when Redis goes away with what it may have missed',
    async (transport) => {
      const subscription = await openOver(transport, apis[0]);
      await subscribedTopics(apis[0], 1);
      const orderId = await placeOrder();
      expect(await subscription.next()).toBe(orderId);
      // One node: the server restarts at once, without persistence, so the history no longer
      // holds the last event received. The cluster: the primary that serves alice's topic is
      // killed and stays down (no replica takes over) past the bound.
      const node =
        'nodes' in redis
          ? await redis.ownerOf(eventTopicChannel(tableName, TOPICS.userOrders.of(alice.userId)))
          : undefined;
      const killedAt = performance.now();
      if (node) await node.kill();
      else await redis.kill().then(() => redis.restart());
      expect(await subscription.next()).toBe('EVENTS_MISSED');
      const endedMs = performance.now() - killedAt;
      console.info(`${mode} over ${transport}: EVENTS_MISSED ${endedMs.toFixed(0)} ms after the kill`);
      expect(endedMs).toBeLessThan(5000);
      expect(await subscription.next()).toBe('complete');
      subscription.close();
      if (node && 'nodes' in redis) await redis.restart(node);
      await waitUntil(
        async () =>
          (await readyDetails(apis[0])).eventBus === 'up' && (await health(consumer)).eventBus.status === 'up',
        { timeoutMs: 20_000, intervalMs: 100, what: 'the instance and the consumer back on Redis' },
      );
      await subscribedTopics(apis[0], 0);
    },
  );
});
