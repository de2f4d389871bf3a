/**
 * On leases a page's change events go out only once the tenure was found current after the page
 * was read (src/streams/shardPages.ts): a soldCount transaction of the page that committed under
 * the lease's fence proves it, and only an event ready before any such commit waits for a
 * consistent read of the lease. On DynamoDB Local; the second test pauses a holder at that read
 * until its lease has gone to another consumer.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import type { ChangeEvent } from '../src/events/changeEvent.js';
import { StreamConsumer } from '../src/streams/consumer.js';
import { LeaseStore } from '../src/streams/leases.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { productKey } from '../src/table/keys.js';
import type { OrderModel } from '../src/table/models.js';
import { aProduct, aUser, anOrder, orderIdOf, store } from './support/factories.js';
import { Faults } from './support/faults.js';
import { endpoint } from './support/harness.js';
import { waitUntil } from './support/waitUntil.js';
import { getItem } from './support/writes.js';

const region = 'us-east-1';
let dynamo: Dynamo;
const cleanup: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  dynamo = createDynamo({ endpoint: endpoint(), region });
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  dynamo.client.destroy();
});

/** A table of its own (one stream, one shard) with a user and a product, and consumers on leases of it. */
async function aShop(leaseTtlMs = 10_000) {
  const tableName = `lease-proof-${randomUUID()}`;
  await ensureTable(dynamo.client, tableName, endpoint());
  cleanup.push(() => dynamo.client.send(new DeleteTableCommand({ TableName: tableName })).then(() => undefined));
  const user = aUser();
  const product = aProduct({ stock: 10_000 });
  await store(dynamo.doc, tableName, { users: [user], products: [product] });
  const faults = new Faults();
  const start = async (name: string, published: ChangeEvent[]) => {
    const own = createDynamo({ endpoint: endpoint(), region });
    const streams = createStreamsClient({ endpoint: endpoint(), region });
    faults.attach(own.client, name);
    const consumer = new StreamConsumer({
      dynamo: own,
      streams,
      tableName,
      consumerName: 'proof',
      pollIntervalMs: 50,
      leases: { owner: `owner-${name}`, ttlMs: leaseTtlMs },
      publish: (event) => void published.push(event),
    });
    await consumer.start();
    cleanup.push(async () => {
      faults.resumeAll();
      await consumer.stop();
      own.client.destroy();
      streams.destroy();
    });
    return consumer;
  };
  const order = (overrides: Partial<OrderModel> = {}) =>
    anOrder(user, [product], { placedAt: new Date().toISOString(), ...overrides });
  return { tableName, user, product, faults, start, order };
}

const heard = (published: ChangeEvent[], orderId: string, type: ChangeEvent['type']) =>
  published.some((event) => orderIdOf(event) === orderId && event.type === type);

describe('a lease holder publishing a page of change events', () => {
  it('takes its fenced soldCount commit as proof of the tenure, and reads the lease only for an event that moves no counter', async () => {
    const shop = await aShop();
    const isCurrent = vi.spyOn(LeaseStore.prototype, 'isCurrent');
    const published: ChangeEvent[] = [];
    await shop.start('a', published);
    const orders = Array.from({ length: 3 }, () => shop.order());
    await store(dynamo.doc, shop.tableName, { orders });
    await waitUntil(() => orders.every((order) => heard(published, order.orderId, 'ORDER_PLACED')), {
      timeoutMs: 20_000,
      what: 'the orders placed',
    });
    // Every event waited for its own order's fenced transaction: no read of the lease was needed.
    expect(isCurrent).not.toHaveBeenCalled();

    // A status change that moves no counter has no commit to wait for: the lease is read first.
    const first = orders[0] as OrderModel;
    await store(dynamo.doc, shop.tableName, { orders: [{ ...first, status: 'SHIPPED' }] });
    await waitUntil(() => heard(published, first.orderId, 'ORDER_STATUS_CHANGED'), {
      timeoutMs: 20_000,
      what: 'the status change',
    });
    expect(isCurrent).toHaveBeenCalled();
    expect((await getItem(dynamo.doc, shop.tableName, productKey(shop.product.productId)))?.soldCount).toBe(3);
  });

  it('publishes no event that moves no counter once its tenure is over, even when it read the page in time', async () => {
    const LEASE_TTL_MS = 1500;
    const shop = await aShop(LEASE_TTL_MS);
    const publishedA: ChangeEvent[] = [];
    const publishedB: ChangeEvent[] = [];
    const order = shop.order();
    await store(dynamo.doc, shop.tableName, { orders: [order] });
    const a = await shop.start('a', publishedA);
    await waitUntil(() => heard(publishedA, order.orderId, 'ORDER_PLACED'), { timeoutMs: 20_000, what: 'the order' });
    const b = await shop.start('b', publishedB);
    expect(b.leasesHeld).toBe(0);

    // a reads the status change and is held at its read of the lease (every call of its client
    // held from then on, renewals included), long enough for b to take the shard over.
    const paused = shop.faults.pauseOn('a', 'GetItem');
    await store(dynamo.doc, shop.tableName, { orders: [{ ...order, status: 'SHIPPED' }] });
    await paused;
    const fenced = new Promise((resolve) => a.once('fenced', resolve));
    await waitUntil(() => heard(publishedB, order.orderId, 'ORDER_STATUS_CHANGED'), {
      timeoutMs: 20_000,
      what: 'the status change published by the new holder',
    });

    shop.faults.resume('a');
    await fenced;
    expect(publishedA.filter((event) => event.type === 'ORDER_STATUS_CHANGED')).toEqual([]);
    expect(a.leasesHeld).toBe(0);
  });
});
