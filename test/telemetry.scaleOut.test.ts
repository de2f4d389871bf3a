/**
 * One trace from a write to every subscriber, across processes: two API instances and a
 * standalone consumer (child processes of the real entry points), one redis-server, the test
 * run's DynamoDB Local, all exporting OTLP/HTTP protobuf to a receiver in this process.
 *
 * placeOrder on instance 0 → the consumer's processing of the stream record → a receive span
 * on EACH instance for the Redis event → each instance's subscriber's event execution; and the
 * consumer's invalidation message → each instance's response-cache eviction, in the same trace.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { invalidationChannels } from '../src/events/invalidationPartitions.js';
import { eventTopicChannel } from '../src/events/redisEventBus.js';
import { TOPICS } from '../src/table/entities/topics.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { aProduct, aUser, store } from './support/factories.js';
import { subscribe } from './support/fanOut.js';
import type { Subscriber } from './support/fanOut.js';
import { endpoint, tokenFor } from './support/harness.js';
import { OtlpReceiver } from './support/otlpReceiver.js';
import type { ReceivedSpan } from './support/otlpReceiver.js';
import { RedisServer } from './support/redisServer.js';
import { PLACE_ORDER } from './support/writes.js';

const SERVER = 2;
const CONSUMER = 5;

const children = new ChildServers();
const clients: Client[] = [];
const user = aUser();
const product = aProduct({ stock: 1000 });
let receiver: OtlpReceiver;
let redis: RedisServer;
let dynamo: Dynamo;
let tableName: string;
let apis: ChildServer[];
let subscribers: Subscriber[];

const otel = (instance: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_BSP_SCHEDULE_DELAY: '50',
  OTEL_METRICS_EXPORTER: 'none',
  OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance}`,
});

beforeAll(async () => {
  receiver = await new OtlpReceiver().start();
  tableName = `otel-scale-${randomUUID()}`;
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  [redis] = await Promise.all([RedisServer.start(), ensureTable(dynamo.client, tableName, endpoint())]);
  await store(dynamo.doc, tableName, { users: [user], products: [product] });
  [apis] = await Promise.all([
    Promise.all(
      ['api-0', 'api-1'].map((name) =>
        children.start(endpoint(), tableName, { REDIS_URL: redis.url, STREAM_CONSUMER: 'false', ...otel(name) }),
      ),
    ),
    children.startConsumer(endpoint(), tableName, { REDIS_URL: redis.url, STREAM_POLL_MS: '50', ...otel('consumer') }),
  ]);
  const query = 'subscription { orderEvents { order { orderId } } }';
  const token = await tokenFor('otel-admin', 'admin');
  subscribers = await Promise.all(apis.map((api, i) => subscribe(clients, `admin@api-${i}`, api, token, query)));
}, 120_000);

afterAll(async () => {
  for (const client of clients) void client.dispose();
  await children.killAll();
  await redis?.kill();
  await receiver?.stop();
  await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  dynamo?.client.destroy();
});

const instanceOf = (span: ReceivedSpan | undefined) => span?.resource['service.instance.id'];

describe('a placed order’s trace across two instances and Redis', () => {
  it('shows placeOrder → stream → consumer → fan-out on each instance → each subscriber’s event', async () => {
    const traceId = randomBytes(16).toString('hex');
    const response = await fetch((apis[0] as ChildServer).url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await tokenFor('otel-admin', 'admin')}`,
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: JSON.stringify({
        query: PLACE_ORDER,
        variables: {
          input: {
            userId: user.userId,
            idempotencyKey: randomUUID(),
            items: [{ productId: product.productId, quantity: 1 }],
          },
        },
      }),
    });
    const result = { body: (await response.json()) as { data?: unknown } };
    const orderId = (result.body?.data as { placeOrder?: { order?: { orderId: string } } } | undefined)?.placeOrder
      ?.order?.orderId;
    expect(orderId, JSON.stringify(result.body)).toBeDefined();
    await Promise.all(subscribers.map((subscriber) => subscriber.waitFor([orderId as string])));

    // The processes export on their own schedules: wait for every branch's spans.
    // The admins listen to the shop-wide topic.
    const channel = eventTopicChannel(tableName, TOPICS.shopOrders.of());
    const count = (name: string) => receiver.trace(traceId).filter((span) => span.name === name).length;
    await receiver.waitFor(
      () =>
        count('POST /graphql') >= 1 &&
        count('process ORDER_PLACED') >= 1 &&
        count(`receive ${channel}`) >= 2 &&
        count('subscription') >= 2 &&
        // Each instance's (one per invalidation channel the write's tags hash to).
        new Set(
          receiver
            .trace(traceId)
            .filter((span) => span.name === 'invalidate response cache')
            .map(instanceOf),
        ).size >= 2
          ? true
          : undefined,
      'the whole trace',
    );
    const events = receiver.trace(traceId).filter((span) => span.name === 'subscription');
    const spans = receiver.trace(traceId);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: ReceivedSpan | undefined) => (span ? byId.get(span.parentSpanId) : undefined);

    const http = spans.find((span) => span.kind === SERVER && span.name === 'POST /graphql');
    const mutation = spans.find((span) => span.name === 'mutation');
    const processing = spans.find((span) => span.name === 'process ORDER_PLACED');
    expect(instanceOf(http)).toBe('api-0');
    expect(parentOf(mutation)).toBe(http);
    expect(mutation?.attributes['graphql.operation.type']).toBe('mutation');
    // The consumer read the record the mutation's transaction wrote, and joined its trace.
    expect(processing).toMatchObject({ kind: CONSUMER, service: 'tablegraph-consumer' });
    expect(parentOf(processing)).toBe(mutation);
    expect(processing?.attributes['tablegraph.event.topic']).toBe(`order:${orderId}`);
    // Its soldCount transaction is in the trace too.
    expect(spans.some((span) => span.parentSpanId === processing?.spanId && span.name === 'TransactWriteItems')).toBe(
      true,
    );

    const receives = spans.filter((span) => span.name === `receive ${channel}`);
    expect(receives.map(instanceOf).sort()).toEqual(['api-0', 'api-1']);
    for (const receive of receives) {
      expect(receive).toMatchObject({ kind: CONSUMER, service: 'tablegraph-api' });
      expect(receive.attributes['messaging.system']).toBe('redis');
      expect(parentOf(receive)).toBe(processing);
    }
    expect(events.map(instanceOf).sort()).toEqual(['api-0', 'api-1']);
    for (const event of events) {
      const receive = parentOf(event);
      expect(receive?.name).toBe(`receive ${channel}`);
      // Each subscriber's event hangs under the instance that delivered it.
      expect(instanceOf(receive)).toBe(instanceOf(event));
      expect(event.attributes['graphql.operation.type']).toBe('subscription');
    }

    // The consumer's invalidation message carried the write's context to each instance's response cache.
    const evictions = spans.filter((span) => span.name === 'invalidate response cache');
    // One message per invalidation channel the write's tags hash to, on each instance.
    expect([...new Set(evictions.map(instanceOf))].sort()).toEqual(['api-0', 'api-1']);
    for (const eviction of evictions) {
      expect(eviction).toMatchObject({ kind: CONSUMER, parentSpanId: mutation?.spanId });
      expect(eviction.attributes['messaging.system']).toBe('redis');
      expect(invalidationChannels(tableName)).toContain(eviction.attributes['messaging.destination.name']);
      expect(eviction.attributes['tablegraph.cache.tags']).toBeGreaterThan(0);
    }
  });
});
