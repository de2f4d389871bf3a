/**
 * Lease epochs fence every side effect of reading a shard (src/streams/leases.ts), on DynamoDB
 * Local: checkpoints (which also never move backwards), sale markers and soldCount. The last
 * test pauses a lease holder in the middle of a batch (every call of its clients held by the
 * fault middleware, as SIGSTOP would) until its lease has gone to the other consumer.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { CheckpointStore } from '../src/streams/checkpoints.js';
import { StreamConsumer } from '../src/streams/consumer.js';
import { LeaseLostError, LeaseStore } from '../src/streams/leases.js';
import type { ChangeEvent } from '../src/events/changeEvent.js';
import { updateSoldCount } from '../src/streams/soldCountBatch.js';
import { listShards } from '../src/streams/shards.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { productKey, productSaleKey, streamCheckpointKey, streamLeaseKey } from '../src/table/keys.js';
import { aProduct, aUser, anOrder, orderIdOf, store } from './support/factories.js';
import { Faults } from './support/faults.js';
import { endpoint } from './support/harness.js';
import { getItem } from './support/writes.js';

const region = 'us-east-1';
const T0 = 1_800_000_000_000;
const TTL = 10_000;
let dynamo: Dynamo;
let tableName: string;
const cleanup: (() => Promise<void> | void)[] = [];
let shardNo = 0;
const aShard = () => `shardId-fence-${Date.now()}-${++shardNo}`;
const leaseOf = (owner: string, ttlMs = TTL, consumerName = 'fenced', doc = dynamo.doc) =>
  new LeaseStore({ doc, tableName, consumerName, owner, ttlMs });

beforeAll(async () => {
  dynamo = createDynamo({ endpoint: endpoint(), region });
  tableName = `fencing-${randomUUID()}`;
  await ensureTable(dynamo.client, tableName, endpoint());
});

afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
});

describe('a lease epoch', () => {
  it('grows with every acquisition, and a release keeps it for the next tenure', async () => {
    const shard = aShard();
    const a = leaseOf('a');
    const b = leaseOf('b');
    const first = await a.acquire(shard, T0);
    expect(first).toEqual({ shardId: shard, owner: 'a', epoch: 1 });
    await a.release(first!);
    expect(await getItem(dynamo.doc, tableName, streamLeaseKey('fenced', shard))).toMatchObject({
      epoch: 1,
      expiresAt: 0,
    });
    const second = await b.acquire(shard, T0 + 1);
    expect(second?.epoch).toBe(2);
    // Taken again by its own holder: a new tenure all the same (what was in flight is fenced off).
    expect((await b.acquire(shard, T0 + 2))?.epoch).toBe(3);
  });

  it('refuses a renewal or release under a tenure that is over, and changes nothing', async () => {
    const shard = aShard();
    const a = leaseOf('a');
    const b = leaseOf('b');
    const old = (await a.acquire(shard, T0))!;
    const current = (await b.acquire(shard, T0 + TTL + 1))!;
    expect(await a.renew(old, T0 + TTL + 2)).toBe(false);
    await a.release(old);
    expect(await getItem(dynamo.doc, tableName, streamLeaseKey('fenced', shard))).toMatchObject({
      owner: 'b',
      epoch: current.epoch,
      expiresAt: T0 + 2 * TTL + 1,
    });
    expect(await a.isCurrent(old)).toBe(false);
    expect(await b.isCurrent(current)).toBe(true);
  });

  it('lets a consumer take a lease over from a named tenure only while that tenure is current', async () => {
    const shard = aShard();
    const a = leaseOf('a');
    const b = leaseOf('b');
    const held = (await a.acquire(shard, T0))!;
    const taken = await b.acquire(shard, T0 + 1, held);
    expect(taken?.epoch).toBe(held.epoch + 1);
    expect(await leaseOf('c').acquire(shard, T0 + 2, held)).toBeUndefined();
  });
});

describe('a checkpoint', () => {
  const checkpoints = () => new CheckpointStore(dynamo.doc, tableName, 'fenced', 'arn:stream/1');

  it('never moves backwards, and compares sequence numbers as numbers', async () => {
    const shard = aShard();
    const store = checkpoints();
    expect(await store.save({ shardId: shard, sequenceNumber: '900000000000000000001', finished: false })).toBe(
      'saved',
    );
    expect(await store.save({ shardId: shard, sequenceNumber: '1000000000000000000002', finished: false })).toBe(
      'saved',
    );
    expect(await store.save({ shardId: shard, sequenceNumber: '999999999999999999999', finished: false })).toBe(
      'behind',
    );
    expect(await store.save({ shardId: shard, sequenceNumber: undefined, finished: true })).toBe('behind');
    // The same position may be written again (a shard finished at its last record).
    expect(await store.save({ shardId: shard, sequenceNumber: '1000000000000000000002', finished: true })).toBe(
      'saved',
    );
    expect(await store.loadOne(shard)).toEqual({
      shardId: shard,
      sequenceNumber: '1000000000000000000002',
      finished: true,
    });
  });

  it('is written only under the current tenure of its lease', async () => {
    const shard = aShard();
    const store = checkpoints();
    const a = leaseOf('a');
    const old = (await a.acquire(shard, T0))!;
    const current = (await leaseOf('b').acquire(shard, T0 + TTL + 1))!;
    await expect(
      store.save({ shardId: shard, sequenceNumber: '500000000000000000000', finished: false }, a.fence(old)),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.loadOne(shard)).toBeUndefined();
    const b = leaseOf('b');
    expect(
      await store.save({ shardId: shard, sequenceNumber: '500000000000000000000', finished: false }, b.fence(current)),
    ).toBe('saved');
  });
});

describe('soldCount under a fence', () => {
  it('writes neither a sale marker nor a counter change once the tenure is over', async () => {
    const user = aUser();
    const product = aProduct();
    await store(dynamo.doc, tableName, { users: [user], products: [product] });
    const order = anOrder(user, [product]);
    const shard = aShard();
    const a = leaseOf('a');
    const old = (await a.acquire(shard, T0))!;
    await leaseOf('b').acquire(shard, T0 + TTL + 1);
    await expect(
      updateSoldCount(dynamo.doc, tableName, order, 'SOLD', new Date(), a.fence(old)),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await getItem(dynamo.doc, tableName, productSaleKey(product.productId, order.orderId))).toBeUndefined();
    expect((await getItem(dynamo.doc, tableName, productKey(product.productId)))?.soldCount).toBeUndefined();
  });
});

describe('a lease holder paused in the middle of a batch past its TTL', () => {
  it('applies nothing when it wakes up: no checkpoint regression, no marker, no event; it drops the shard', async () => {
    const LEASE_TTL_MS = 1500;
    const faults = new Faults();
    const shopTable = `fencing-shop-${randomUUID()}`;
    await ensureTable(dynamo.client, shopTable, endpoint());
    cleanup.push(() => dynamo.client.send(new DeleteTableCommand({ TableName: shopTable })).then(() => undefined));
    const user = aUser();
    const product = aProduct({ stock: 10_000 });
    await store(dynamo.doc, shopTable, { users: [user], products: [product] });
    const published = { a: [] as ChangeEvent[], b: [] as ChangeEvent[] };
    const start = async (name: 'a' | 'b') => {
      const own = createDynamo({ endpoint: endpoint(), region });
      const streams = createStreamsClient({ endpoint: endpoint(), region });
      faults.attach(own.client, name);
      faults.attach(streams, name);
      const consumer = new StreamConsumer({
        dynamo: own,
        streams,
        tableName: shopTable,
        consumerName: 'paused',
        pollIntervalMs: 50,
        leases: { owner: `owner-${name}`, ttlMs: LEASE_TTL_MS },
        publish: (event) => void published[name].push(event),
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
    // Who holds the shard is read from the lease itself: `leasesHeld` is each consumer's own
    // view, by its clock, and lapses for a moment whenever a renewal is slower than the TTL.
    const leases = new LeaseStore({
      doc: dynamo.doc,
      tableName: shopTable,
      consumerName: 'paused',
      owner: 'test',
      ttlMs: LEASE_TTL_MS,
    });
    const owners = async () => (await leases.list()).map((lease) => lease.owner);
    const a = await start('a');
    expect(await owners()).toEqual(['owner-a']);
    const b = await start('b');
    expect(b.leasesHeld).toBe(0);

    // a takes the first order's batch, and is held at its soldCount transaction.
    const paused = faults.pauseOn('a', 'TransactWriteItems');
    const first = anOrder(user, [product], { placedAt: new Date().toISOString() });
    await store(dynamo.doc, shopTable, { orders: [first] });
    await paused;
    const fenced = new Promise((resolve) => a.once('fenced', resolve));

    // Meanwhile b takes the shard over (a's lease expires), processes that order and more.
    const later = Array.from({ length: 5 }, () => anOrder(user, [product], { placedAt: new Date().toISOString() }));
    await store(dynamo.doc, shopTable, { orders: later });
    const orderIds = [first, ...later].map((order) => order.orderId);
    const seen = new Set<string>();
    await b.waitForBatch((batch) => {
      for (const event of batch.events) seen.add(orderIdOf(event) ?? '');
      return orderIds.every((id) => seen.has(id)) && batch.checkpointed;
    }, 20_000);
    const lister = createStreamsClient({ endpoint: endpoint(), region });
    const [shard] = await listShards(lister, b.streamArn as string);
    lister.destroy();
    const checkpointKey = streamCheckpointKey('paused', shard?.shardId as string);
    const before = await getItem(dynamo.doc, shopTable, checkpointKey);
    expect(before?.sequenceNumber).toBeDefined();

    faults.resume('a');
    await fenced;
    await a.waitUntilCaughtUp();
    const after = await getItem(dynamo.doc, shopTable, checkpointKey);
    expect(BigInt(after?.sequenceNumber as string)).toBeGreaterThanOrEqual(BigInt(before?.sequenceNumber as string));
    expect(published.a.filter((event) => orderIds.includes(orderIdOf(event) ?? ''))).toEqual([]);
    expect(a.leasesHeld).toBe(0);
    expect(await owners()).toEqual(['owner-b']);
    expect((await getItem(dynamo.doc, shopTable, productKey(product.productId)))?.soldCount).toBe(orderIds.length);
  });
});
