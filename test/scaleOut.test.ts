/**
 * Scale-out on real components: 3 API instances (STREAM_CONSUMER=false) and 2 standalone
 * consumers (`npm run consumer`) as child processes, one redis-server, the test run's DynamoDB
 * Local. The tests run in order on one deployment, each leaving it as the next expects:
 * fan-out, fail-over after kill -9, a Redis restart, then exactness of soldCount (with a forced
 * replay, so that duplicate deliveries are seen and counted).
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { openEventBus } from './support/redisBus.js';
import type { OpenedEventBus } from './support/redisBus.js';
import { streamHandlerFromEnv } from '../src/lambda/streams.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { STREAM_CHECKPOINT_PK } from '../src/table/keys.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { aProduct, aUser, anOrder, orderIdOf, store } from './support/factories.js';
import { endpoint, tokenFor } from './support/harness.js';
import { percentile, postGraphQL } from './support/load.js';
import { waitUntil } from './support/waitUntil.js';
import { health, metric, readyDetails, subscribe } from './support/fanOut.js';
import type { Subscriber } from './support/fanOut.js';
import { RedisServer } from './support/redisServer.js';
import { lambdaEvent, readStream } from './support/streamRecords.js';
import { PLACE_ORDER, getItem } from './support/writes.js';
import { productKey } from '../src/table/keys.js';
import { TOPICS } from '../src/table/entities/topics.js';

const LEASE_TTL_MS = 1500;
const ADD_REVIEW = `mutation AddReview($input: AddReviewInput!) { addReview(input: $input) { review { reviewId } userErrors { code } } }`;
const children = new ChildServers();
const clients: Client[] = [];
const alice = aUser();
const bob = aUser();
const product = aProduct({ stock: 100_000 });
let redis: RedisServer;
let dynamo: Dynamo;
let tableName: string;
let apis: ChildServer[];
let consumers: ChildServer[];
let admin: string;
/** Units of `product` ordered so far (every order below is for it). */
let unitsOrdered = 0;
/** Orders whose placement reached the stream (the replay at the end redelivers each of them). */
const ordersPlaced: string[] = [];
/** performance.now() when each order's placeOrder answered. */
const answeredAt = new Map<string, number>();
/** Publish-to-receipt times through Redis, as a process subscribed to the channel sees them. */
const redisLatencies: number[] = [];
let probe: OpenedEventBus;
/** Duplicate deliveries counted by consumers that have since stopped. */
let duplicatesOfStopped = 0;
/** How often the probe received each order's events, and who waits for a count. */
const probeCounts = new Map<string, number>();
const probeWaiters = new Set<() => void>();
let streamsClient: DynamoDBStreamsClient;

/** Resolves once the probe has received `times` events of `orderId`. */
function probeReceived(orderId: string, times: number, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      probeWaiters.delete(check);
      reject(new Error(`the probe saw ${probeCounts.get(orderId) ?? 0} of ${times} events of ${orderId}`));
    }, timeoutMs);
    const check = () => {
      if ((probeCounts.get(orderId) ?? 0) < times) return;
      probeWaiters.delete(check);
      clearTimeout(timer);
      resolve();
    };
    probeWaiters.add(check);
    check();
  });
}

const EVERYTHING_QUERY = 'subscription { orderEvents { order { orderId } } }';
let everything: Subscriber[];
let alicesOwn: Subscriber;

const consumerEnv = () => ({
  REDIS_URL: redis.url,
  LEASE_TTL_MS: String(LEASE_TTL_MS),
  STREAM_POLL_MS: '50',
});

async function placeOrder(api: ChildServer, userId: string, quantity = 1): Promise<string> {
  const result = await postGraphQL(api.url, admin, PLACE_ORDER, {
    input: { userId, idempotencyKey: randomUUID(), items: [{ productId: product.productId, quantity }] },
  });
  const orderId = (result.body?.data as { placeOrder?: { order?: { orderId: string } } } | undefined)?.placeOrder?.order
    ?.orderId;
  if (!orderId)
    throw new Error(`placeOrder failed: ${result.outcome} ${JSON.stringify(result.body ?? result.failure)}`);
  answeredAt.set(orderId, performance.now());
  unitsOrdered += quantity;
  ordersPlaced.push(orderId);
  return orderId;
}

/** The consumers holding a lease now, and the others. */
async function leaseHolders(running: ChildServer[]): Promise<{ holders: ChildServer[]; others: ChildServer[] }> {
  const held = await Promise.all(running.map(async (consumer) => (await health(consumer)).leasesHeld > 0));
  return { holders: running.filter((_, i) => held[i]), others: running.filter((_, i) => !held[i]) };
}

beforeAll(async () => {
  admin = `Bearer ${await tokenFor('scale-admin', 'admin')}`;
  tableName = `scale-${randomUUID()}`;
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  [redis] = await Promise.all([RedisServer.start(), ensureTable(dynamo.client, tableName, endpoint())]);
  await store(dynamo.doc, tableName, { users: [alice, bob], products: [product] });
  const apiEnv = { REDIS_URL: redis.url, STREAM_CONSUMER: 'false' };
  [consumers, apis] = await Promise.all([
    Promise.all([0, 1].map(() => children.startConsumer(endpoint(), tableName, consumerEnv()))),
    Promise.all([0, 1, 2].map(() => children.start(endpoint(), tableName, apiEnv))),
  ]);
  // The shop-wide topic: every order's events, once each.
  probe = await openEventBus({ url: redis.url }, tableName, { watch: [TOPICS.shopOrders.of()] });
  probe.onDelivered = (ms) => redisLatencies.push(ms);
  probe.subscribe((event) => {
    const orderId = orderIdOf(event);
    if (orderId) probeCounts.set(orderId, (probeCounts.get(orderId) ?? 0) + 1);
    for (const waiter of [...probeWaiters]) waiter();
  });
  streamsClient = createStreamsClient({ endpoint: endpoint(), region: 'us-east-1' });
  await subscribeEveryone('');
}, 120_000);

/** The admin on every instance, and alice on the third, each subscribed to every order event it may see. */
async function subscribeEveryone(suffix: string): Promise<void> {
  const adminToken = await tokenFor('scale-admin', 'admin');
  everything = await Promise.all(
    apis.map((api, i) => subscribe(clients, `admin@api${i}${suffix}`, api, adminToken, EVERYTHING_QUERY)),
  );
  alicesOwn = await subscribe(
    clients,
    `alice@api2${suffix}`,
    apis[2] as ChildServer,
    await tokenFor(alice.userId),
    EVERYTHING_QUERY,
  );
}

afterAll(async () => {
  for (const client of clients) void client.dispose();
  await probe?.close();
  streamsClient?.destroy();
  await children.killAll();
  await redis?.kill();
  await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  dynamo?.client.destroy();
});

describe('scale-out on Redis', () => {
  it('delivers every order, placed through any instance or written with the SDK, to subscribers on every instance', async () => {
    const viaApis: string[] = [];
    for (let round = 0; round < 10; round++) {
      for (const [i, api] of apis.entries()) viaApis.push(await placeOrder(api, i === 1 ? bob.userId : alice.userId));
    }
    const direct = anOrder(alice, [product], { placedAt: new Date().toISOString() });
    await store(dynamo.doc, tableName, { orders: [direct] });
    unitsOrdered += 1;
    ordersPlaced.push(direct.orderId);
    const all = [...viaApis, direct.orderId];
    await Promise.all(everything.map((subscriber) => subscriber.waitFor(all)));
    // The same access rules as on one instance: alice hears only of her own orders.
    const alices = all.filter((_, i) => i === all.length - 1 || i % 3 !== 1);
    await alicesOwn.waitFor(alices);
    expect([...alicesOwn.received].sort()).toEqual([...alices].sort());
    // Exactly one consumer reads the stream's shard at a time.
    expect((await leaseHolders(consumers)).holders).toHaveLength(1);
    const endToEnd = everything.flatMap((subscriber) =>
      viaApis.map((id) => (subscriber.receivedAt.get(id) as number) - (answeredAt.get(id) as number)),
    );
    console.info(
      `placeOrder answered -> subscriber received (${endToEnd.length} deliveries, through the stream, ` +
        `a consumer and Redis): p50 ${percentile(endToEnd, 50).toFixed(1)} ms, p99 ${percentile(endToEnd, 99).toFixed(1)} ms`,
    );
    console.info(
      `event latency through Redis (publish to receipt, ${redisLatencies.length} events): ` +
        `p50 ${percentile(redisLatencies, 50).toFixed(1)} ms, p99 ${percentile(redisLatencies, 99).toFixed(1)} ms`,
    );
  });

  it('delivers reviewAdded to anonymous subscribers on every instance, for a review written through any of them', async () => {
    const query = `subscription { reviewAdded(productId: "${product.productId}") { reviewId rating } }`;
    const watchers = await Promise.all(
      apis.map((api, i) =>
        subscribe(clients, `anonymous@api${i}`, api, undefined, query, (data) => data?.reviewAdded?.reviewId),
      ),
    );
    const added = await postGraphQL(apis[1]?.url as string, `Bearer ${await tokenFor(bob.userId)}`, ADD_REVIEW, {
      input: { productId: product.productId, rating: 4, title: 'Across instances', body: '' },
    });
    const reviewId = (added.body?.data as { addReview: { review: { reviewId: string } } }).addReview.review.reviewId;
    await Promise.all(watchers.map((watcher) => watcher.waitFor([reviewId])));
  });

  it('publishes to Redis from the stream Lambda too: every instance hears its events', async () => {
    const orderId = await placeOrder(apis[0] as ChildServer, alice.userId);
    // The consumers publish it first; the Lambda, given the same record, publishes it again.
    await probeReceived(orderId, 1);
    const { records, streamArn } = await readStream(dynamo.client, streamsClient, tableName);
    const record = records.filter((r) => r.eventName === 'INSERT' && r.dynamodb?.Keys?.PK?.S === `ORDER#${orderId}`);
    expect(record).toHaveLength(1);
    const lambda = await streamHandlerFromEnv({
      NODE_ENV: 'test',
      DYNAMODB_ENDPOINT: endpoint(),
      TABLE_NAME: tableName,
      REDIS_URL: redis.url,
    });
    try {
      const fromLambda = probeReceived(orderId, 2);
      expect(await lambda.handler(lambdaEvent(record, streamArn))).toEqual({ batchItemFailures: [] });
      await fromLambda;
    } finally {
      await lambda.close();
    }
    await Promise.all(everything.map((subscriber) => subscriber.waitFor([orderId])));
  });

  it('fails over to the other consumer when the lease holder is killed with SIGKILL', async () => {
    const { holders, others } = await leaseHolders(consumers);
    const [holder, standby] = [holders[0] as ChildServer, others[0] as ChildServer];
    const killedAt = Date.now();
    await children.kill(holder);
    const orderId = await placeOrder(apis[0] as ChildServer, alice.userId, 2);
    const taken = await standby.node.waitForLog(
      (line) => line.msg === 'stream shard lease taken' && (line.time as number) >= killedAt,
      'the standby taking the lease',
    );
    await Promise.all(everything.map((subscriber) => subscriber.waitFor([orderId])));
    const failoverMs = (taken.time as number) - killedAt;
    console.info(`fail-over: the standby took the shard ${failoverMs} ms after kill -9 (LEASE_TTL_MS ${LEASE_TTL_MS})`);
    expect(failoverMs).toBeLessThan(LEASE_TTL_MS * 4);
    consumers = [standby];
  });

  it('loses nothing when every consumer is killed: orders placed meanwhile arrive once one starts', async () => {
    await children.kill(consumers[0] as ChildServer);
    const meanwhile: string[] = [];
    for (const api of apis) meanwhile.push(await placeOrder(api, bob.userId));
    consumers = [await children.startConsumer(endpoint(), tableName, consumerEnv())];
    await Promise.all(everything.map((subscriber) => subscriber.waitFor(meanwhile)));
  });

  it('keeps serving while Redis is down, ends the open subscriptions with EVENTS_MISSED within 5 s, and delivers to new ones once it is back', async () => {
    const [consumer] = consumers as [ChildServer];
    const open = [...everything, alicesOwn];
    const killedAt = performance.now();
    await redis.kill();
    // Nothing proves that the subscriptions missed nothing while Redis is away: each is told.
    await waitUntil(() => open.every((subscriber) => subscriber.endedWith === 'EVENTS_MISSED'), {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'every open subscription ended with EVENTS_MISSED',
    });
    expect(performance.now() - killedAt).toBeLessThan(5000);
    await Promise.all(
      apis.map((api) =>
        waitUntil(async () => (await readyDetails(api)).eventBus === 'down', {
          timeoutMs: 10_000,
          intervalMs: 100,
          what: 'the bus reported down',
        }),
      ),
    );
    // Queries and mutations do not need Redis, and readiness does not fail for it.
    for (const api of apis) expect((await readyDetails(api)).status).toBe(200);
    const lostBefore = await metric(consumer, 'tablegraph_event_bus_lost_events');
    await placeOrder(apis[1] as ChildServer, alice.userId);
    // Its event is published while Redis is down: lost (counted), as documented.
    await waitUntil(async () => (await metric(consumer, 'tablegraph_event_bus_lost_events')) > lostBefore, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the lost event counted',
    });
    // An instance started now serves at once, and joins the bus once Redis is back.
    const late = await children.start(endpoint(), tableName, { REDIS_URL: redis.url });
    expect(await readyDetails(late)).toEqual({ status: 200, eventBus: 'down' });
    await redis.restart();
    await Promise.all([
      ...apis.map((api) =>
        waitUntil(async () => (await readyDetails(api)).eventBus === 'up', {
          timeoutMs: 15_000,
          intervalMs: 100,
          what: 'the bus reported up again',
        }),
      ),
      waitUntil(async () => (await health(consumer)).eventBus.status === 'up', {
        timeoutMs: 15_000,
        intervalMs: 100,
        what: 'the consumer reconnected',
      }),
    ]);
    await waitUntil(async () => (await readyDetails(late)).eventBus === 'up', {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the late instance joined the bus',
    });
    // The clients refetch and subscribe again, as EVENTS_MISSED asks.
    await subscribeEveryone(' again');
    const lateSubscriber = await subscribe(
      clients,
      'admin@late',
      late,
      await tokenFor('scale-admin', 'admin'),
      'subscription { orderEvents { order { orderId } } }',
    );
    const after = await placeOrder(apis[2] as ChildServer, alice.userId);
    await lateSubscriber.waitFor([after]);
    await Promise.all(everything.map((subscriber) => subscriber.waitFor([after])));
    await alicesOwn.waitFor([after]);
    expect([...everything, alicesOwn].filter((subscriber) => subscriber.closed)).toEqual([]);
  });

  it('hands the shard over when the holder stops cleanly: SIGTERM releases its lease', async () => {
    const [holder] = consumers as [ChildServer];
    const standby = await children.startConsumer(endpoint(), tableName, consumerEnv());
    const ownerOf = async (consumer: ChildServer) =>
      (await consumer.node.waitForLog((line) => line.msg.startsWith('tablegraph consumer ready'), 'ready')).owner;
    const holderOwner = await ownerOf(holder);
    duplicatesOfStopped += await metric(holder, 'tablegraph_stream_duplicate_records_total');
    holder.node.child.kill('SIGTERM');
    expect((await holder.node.exited).code).toBe(0);
    const { Items: leases = [] } = await dynamo.doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :lease)',
        ExpressionAttributeValues: { ':pk': STREAM_CHECKPOINT_PK, ':lease': 'LEASE#' },
      }),
    );
    expect(leases.filter((lease) => lease.owner === holderOwner)).toEqual([]);
    const orderId = await placeOrder(apis[0] as ChildServer, bob.userId);
    await standby.node.waitForLog((line) => line.msg === 'stream shard lease taken', 'the standby taking the lease');
    await Promise.all(everything.map((subscriber) => subscriber.waitFor([orderId])));
    consumers = [standby];
  });

  it('counts soldCount exactly, and counts the duplicates a replay delivers without changing it', async () => {
    const soldCount = async () => (await getItem(dynamo.doc, tableName, productKey(product.productId)))?.soldCount;
    await waitUntil(async () => (await soldCount()) === unitsOrdered, {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: `soldCount ${unitsOrdered}`,
    });
    const running = await metric(consumers[0] as ChildServer, 'tablegraph_stream_duplicate_records_total');
    // Consumers killed with SIGKILL cannot be asked; their successors count what they left unrecorded.
    console.info(`duplicate deliveries counted during the run: ${duplicatesOfStopped + running}`);

    // Lose every checkpoint: the next consumer reads the stream again from its oldest record.
    await children.kill(consumers[0] as ChildServer);
    const { Items = [] } = await dynamo.doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': STREAM_CHECKPOINT_PK },
      }),
    );
    for (const item of Items) {
      await dynamo.doc.send(new DeleteCommand({ TableName: tableName, Key: { PK: item.PK, SK: item.SK } }));
    }
    const replaying = await children.startConsumer(endpoint(), tableName, consumerEnv());
    consumers = [replaying];
    const duplicates = await waitUntil(
      async () => {
        const count = await metric(replaying, 'tablegraph_stream_duplicate_records_total');
        return count >= ordersPlaced.length && count;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: `${ordersPlaced.length} duplicates counted` },
    );
    expect(duplicates).toBe(ordersPlaced.length);
    expect(await soldCount()).toBe(unitsOrdered);
  });
});
