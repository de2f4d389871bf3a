/**
 * The stream pipeline against DynamoDB Local's real stream: the in-process consumer, the
 * processing it shares with the Lambda handler, and what at-least-once delivery must not break
 * (redelivered batches, restarts, expired iterators, failed records). Orders are written
 * straight to the table with the SDK, as any other writer of the table would.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { CursorCodec } from '../src/db/cursor.js';
import type { DataSources } from '../src/db/loaders.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { createStreamHandler } from '../src/lambda/streams.js';
import { lambdaEvent, readStream as readStreamOf } from './support/streamRecords.js';
import { orderToDetailsItem, orderToUserItem } from '../src/table/codecs.js';
import { STREAM_CHECKPOINT_PK, orderKey, productSaleKey } from '../src/table/keys.js';
import type { OrderModel, OrderStatus, ProductModel, UserModel } from '../src/table/models.js';
import { StreamConsumer } from '../src/streams/consumer.js';
import type { StreamConsumerOptions } from '../src/streams/consumer.js';
import { waitForEmit } from '../src/streams/consumerEvents.js';
import { processRecords } from '../src/streams/processor.js';
import type { ChangeEvent, ChangeEventOf } from '../src/events/changeEvent.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { cancelOrder, updateOrderStatus } from '../src/writes/orderStatus.js';
import { anOrder, aProduct, aUser, store } from './support/factories.js';
import { seededRandom } from '../src/seed/seededRandom.js';
import { Faults } from './support/faults.js';
import { endpoint } from './support/harness.js';
import { getItem } from './support/writes.js';

const region = 'us-east-1';
let dynamo: Dynamo;
let streams: DynamoDBStreamsClient;
const tables: string[] = [];
const consumers: StreamConsumer[] = [];
const extraClients: DynamoDBStreamsClient[] = [];

beforeAll(() => {
  dynamo = createDynamo({ endpoint: endpoint(), region });
  streams = createStreamsClient({ endpoint: endpoint(), region });
});

afterAll(async () => {
  await Promise.all(consumers.map((consumer) => consumer.stop()));
  for (const tableName of tables) await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  for (const client of [streams, ...extraClients]) client.destroy();
  dynamo.client.destroy();
});

/** A table of its own (and so a stream of its own) with a user and `productCount` products. */
async function openShop(
  productCount: number,
): Promise<{ tableName: string; user: UserModel; products: ProductModel[] }> {
  const tableName = `t-streams-${randomUUID()}`;
  await ensureTable(dynamo.client, tableName, endpoint());
  tables.push(tableName);
  const user = aUser();
  const products = Array.from({ length: productCount }, () => aProduct({ stock: 1000 }));
  await store(dynamo.doc, tableName, { users: [user], products });
  return { tableName, user, products };
}

/** An order of `user` with the given quantities, placed now. */
function orderOf(user: UserModel, lines: [ProductModel, number][]): OrderModel {
  const base = anOrder(
    user,
    lines.map(([product]) => product),
  );
  const items = base.items.map((line, i) => ({ ...line, quantity: lines[i]?.[1] ?? 1 }));
  const now = new Date().toISOString();
  return {
    ...base,
    items,
    totalCents: items.reduce((sum, line) => sum + line.unitPriceCents * line.quantity, 0),
    placedAt: now,
    updatedAt: now,
  };
}

/** Writes an order's two items in one transaction with the bare SDK: not through our server or writes. */
async function writeOrder(tableName: string, order: OrderModel): Promise<void> {
  await dynamo.doc.send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: tableName, Item: orderToDetailsItem(order) } },
        { Put: { TableName: tableName, Item: orderToUserItem(order) } },
      ],
    }),
  );
}

const dataSources = (tableName: string): DataSources => ({
  dynamo,
  tableName,
  cursors: new CursorCodec('streams-test'),
});

async function cancel(tableName: string, orderId: string): Promise<void> {
  const result = await cancelOrder(dataSources(tableName), { orderId });
  expect(result.ok).toBe(true);
}

async function soldCountOf(tableName: string, product: ProductModel): Promise<number> {
  const item = await getItem(dynamo.doc, tableName, { PK: `PRODUCT#${product.productId}`, SK: 'DETAILS' });
  return Number(item?.soldCount ?? 0);
}

const soldCountsOf = (tableName: string, products: ProductModel[]) =>
  Promise.all(products.map((product) => soldCountOf(tableName, product)));

type OrderEventModel = ChangeEventOf<'Order'>;

/** The order events a consumer published, awaitable: a test waits for an event, never for time. */
class EventLog {
  readonly events: OrderEventModel[] = [];
  private readonly times = new Map<OrderEventModel, number>();
  private readonly waiters = new Set<() => void>();

  readonly publish = (event: ChangeEvent): void => {
    if (event.entity !== 'Order') return;
    this.events.push(event);
    this.times.set(event, performance.now());
    for (const waiter of this.waiters) waiter();
  };

  /** Resolves with the first event (already published or still to come) that satisfies `predicate`. */
  until(predicate: (event: OrderEventModel) => boolean, timeoutMs = 10_000): Promise<OrderEventModel> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.events.find(predicate);
        if (!found) return;
        done();
        resolve(found);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching event in ${timeoutMs} ms; saw ${JSON.stringify(this.summary())}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  timeOf(event: OrderEventModel): number {
    return this.times.get(event) ?? Number.NaN;
  }

  /** `TYPE orderId STATUS`, in publish order. */
  summary(): string[] {
    return this.events.map((event) => `${event.type} ${event.node.orderId} ${event.node.status}`);
  }
}

const placed = (order: OrderModel) => (event: ChangeEvent) =>
  event.entity === 'Order' && event.type === 'ORDER_PLACED' && event.node.orderId === order.orderId;
const changed = (order: OrderModel, to: OrderStatus) => (event: ChangeEvent) =>
  event.entity === 'Order' &&
  event.type === 'ORDER_STATUS_CHANGED' &&
  event.node.orderId === order.orderId &&
  event.node.status === to;

async function startConsumer(
  tableName: string,
  log: EventLog,
  options: Partial<StreamConsumerOptions> = {},
): Promise<StreamConsumer> {
  const consumer = new StreamConsumer({ dynamo, streams, tableName, publish: log.publish, ...options });
  consumers.push(consumer);
  await consumer.start();
  return consumer;
}

/** Every record of the table's stream, read with GetRecords from TRIM_HORIZON, shard by shard. */
const readStream = (tableName: string) => readStreamOf(dynamo.client, streams, tableName);

const isDetailsOf = (order: OrderModel) => (record: _Record) =>
  record.dynamodb?.Keys?.PK?.S === orderKey(order.orderId).PK;

/**
 * Exactly `expected` (`TYPE orderId STATUS`) were published, in that order: a record that moves
 * no counter is ready before the orders' transaction, its event published in stream order all the same.
 */
function expectEvents(log: EventLog, expected: string[]): void {
  expect(log.summary()).toEqual(expected);
}

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
}

describe('a running consumer', () => {
  let shop: Awaited<ReturnType<typeof openShop>>;
  const log = new EventLog();
  let consumer: StreamConsumer;

  beforeAll(async () => {
    shop = await openShop(4);
    consumer = await startConsumer(shop.tableName, log);
  });

  it('publishes ORDER_PLACED for an order written straight to the table and counts its units', async () => {
    const [first, second] = shop.products as [ProductModel, ProductModel];
    const order = orderOf(shop.user, [
      [first, 2],
      [second, 3],
    ]);
    await writeOrder(shop.tableName, order);
    const event = await log.until(placed(order));

    expect(event).toEqual({
      entity: 'Order',
      type: 'ORDER_PLACED',
      node: order,
      previous: null,
      seq: expect.stringMatching(/^\d+$/),
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      topics: [`order:${order.orderId}`, `user-orders:${order.userId}`, 'orders'],
    });
    // soldCount is written before the event is published.
    expect(await soldCountsOf(shop.tableName, [first, second])).toEqual([2, 3]);
    // The copy in the user's partition is the same order: it must not be counted or announced twice.
    expect(log.events.filter(placed(order))).toHaveLength(1);
  });

  it('publishes ORDER_STATUS_CHANGED for a cancellation and takes its units back', async () => {
    const [first, second] = shop.products as [ProductModel, ProductModel];
    const order = orderOf(shop.user, [[first, 5]]);
    await writeOrder(shop.tableName, order);
    await log.until(placed(order));
    expect(await soldCountsOf(shop.tableName, [first, second])).toEqual([7, 3]);

    await cancel(shop.tableName, order.orderId);
    const event = await log.until(changed(order, 'CANCELLED'));
    expect(event.previous).toEqual({ status: 'PLACED' });
    expect(event.node).toMatchObject({ orderId: order.orderId, status: 'CANCELLED', version: 2 });
    expect(await soldCountsOf(shop.tableName, [first, second])).toEqual([2, 3]);
  });

  it('publishes other status changes without touching soldCount, and leaves the product version alone', async () => {
    const third = shop.products[2] as ProductModel;
    const order = orderOf(shop.user, [[third, 1]]);
    await writeOrder(shop.tableName, order);
    await log.until(placed(order));
    expect(
      (await updateOrderStatus(dataSources(shop.tableName), { orderId: order.orderId, status: 'SHIPPED' })).ok,
    ).toBe(true);
    const event = await log.until(changed(order, 'SHIPPED'));
    expect(event.previous).toEqual({ status: 'PLACED' });
    expect(await soldCountOf(shop.tableName, third)).toBe(1);
    // Derived data is not an edit: optimistic locking on the product must not notice it.
    const product = await getItem(dynamo.doc, shop.tableName, { PK: `PRODUCT#${third.productId}`, SK: 'DETAILS' });
    expect(product).toMatchObject({ version: third.version, updatedAt: third.updatedAt, stock: third.stock });
  });

  it('goes quiet once caught up: its own checkpoint writes do not feed the stream', async () => {
    await consumer.waitUntilCaughtUp();
    expect(consumer.lagSeconds).toBe(0);
    let batches = 0;
    const count = () => batches++;
    consumer.on('batch', count);
    try {
      for (let round = 0; round < 5; round++) await consumer.waitUntilCaughtUp();
    } finally {
      consumer.off('batch', count);
    }
    expect(batches).toBe(0);
  });

  it('measures the latency from a committed write to its published event', async () => {
    const product = shop.products[3] as ProductModel;
    const fromCommit: number[] = [];
    const fromRequest: number[] = [];
    for (let i = 0; i < 50; i++) {
      const order = orderOf(shop.user, [[product, 1]]);
      const seen = log.until(placed(order));
      const sent = performance.now();
      await writeOrder(shop.tableName, order);
      const committed = performance.now();
      const at = log.timeOf(await seen);
      fromCommit.push(at - committed);
      fromRequest.push(at - sent);
    }
    const ms = (value: number) => `${Math.round(value)} ms`;
    console.info(
      `stream latency over 50 writes (poll interval 200 ms): commit -> event p50 ${ms(percentile(fromCommit, 0.5))}, ` +
        `p99 ${ms(percentile(fromCommit, 0.99))}; write request -> event p50 ${ms(percentile(fromRequest, 0.5))}, ` +
        `p99 ${ms(percentile(fromRequest, 0.99))}`,
    );
    expect(await soldCountOf(shop.tableName, product)).toBe(50);
    expect(percentile(fromCommit, 0.99)).toBeLessThan(1500);
  });
});

describe('redelivery', () => {
  it('leaves soldCount unchanged when a batch is processed again, reordered, or in part', async () => {
    const shop = await openShop(2);
    const [first, second] = shop.products as [ProductModel, ProductModel];
    const kept = orderOf(shop.user, [
      [first, 2],
      [second, 1],
    ]);
    const cancelled = orderOf(shop.user, [[first, 4]]);
    await writeOrder(shop.tableName, kept);
    await writeOrder(shop.tableName, cancelled);
    await cancel(shop.tableName, cancelled.orderId);
    const { records } = await readStream(shop.tableName);
    const log = new EventLog();
    const deps = { doc: dynamo.doc, tableName: shop.tableName, publish: log.publish };

    const once = await processRecords(records, deps);
    expect(once.failures).toEqual([]);
    expect(once.soldCountChanges).toBe(4); // kept: 2 lines, cancelled: counted once and taken back once
    expect(await soldCountsOf(shop.tableName, [first, second])).toEqual([2, 1]);
    expectEvents(log, [
      `ORDER_PLACED ${kept.orderId} PLACED`,
      `ORDER_PLACED ${cancelled.orderId} PLACED`,
      `ORDER_STATUS_CHANGED ${cancelled.orderId} CANCELLED`,
    ]);

    // The same batch again: events again (at least once), no counter moves.
    const again = await processRecords(records, deps);
    expect(again).toMatchObject({ failures: [], soldCountChanges: 0 });
    const sequenceNumbers = (events: ChangeEvent[]) => events.map((event) => event.seq).sort();
    expect(sequenceNumbers(again.events)).toEqual(sequenceNumbers(once.events));
    // Reversed, and the cancelled order's INSERT alone after its cancellation was applied.
    expect(await processRecords([...records].reverse(), deps)).toMatchObject({ failures: [], soldCountChanges: 0 });
    const insertOfCancelled = records.filter(isDetailsOf(cancelled)).filter((record) => record.eventName === 'INSERT');
    expect(insertOfCancelled).toHaveLength(1);
    expect(await processRecords(insertOfCancelled, deps)).toMatchObject({ failures: [], soldCountChanges: 0 });
    expect(await soldCountsOf(shop.tableName, [first, second])).toEqual([2, 1]);

    const marker = await getItem(dynamo.doc, shop.tableName, productSaleKey(first.productId, cancelled.orderId));
    expect(marker).toMatchObject({ state: 'CANCELLED', quantity: 4 });
  });

  it('never counts an order whose cancellation arrives before its INSERT', async () => {
    const shop = await openShop(1);
    const product = shop.products[0] as ProductModel;
    const order = orderOf(shop.user, [[product, 3]]);
    await writeOrder(shop.tableName, order);
    await cancel(shop.tableName, order.orderId);
    const ofOrder = (await readStream(shop.tableName)).records.filter(isDetailsOf(order));
    expect(ofOrder.map((record) => record.eventName)).toEqual(['INSERT', 'MODIFY']);
    const deps = { doc: dynamo.doc, tableName: shop.tableName };
    await processRecords([...ofOrder].reverse(), deps);
    await processRecords(ofOrder, deps);
    expect(await soldCountOf(shop.tableName, product)).toBe(0);
  });

  it('skips lines of products that no longer exist and counts the others', async () => {
    const shop = await openShop(1);
    const product = shop.products[0] as ProductModel;
    const ghost = aProduct(); // never stored
    const order = orderOf(shop.user, [
      [ghost, 9],
      [product, 2],
    ]);
    await writeOrder(shop.tableName, order);
    const records = (await readStream(shop.tableName)).records.filter(isDetailsOf(order));
    const result = await processRecords(records, { doc: dynamo.doc, tableName: shop.tableName });
    expect(result).toMatchObject({ failures: [], soldCountChanges: 1 });
    expect(await soldCountOf(shop.tableName, product)).toBe(2);
    expect(await getItem(dynamo.doc, shop.tableName, productSaleKey(ghost.productId, order.orderId))).toBeUndefined();
  });
});

describe('the order of events', () => {
  it("publishes a batch's events in stream order when a later record waits for nothing, and none after a failed one", async () => {
    const shop = await openShop(2);
    const [first, second] = shop.products as [ProductModel, ProductModel];
    const orders = [orderOf(shop.user, [[first, 1]]), orderOf(shop.user, [[second, 1]])] as [OrderModel, OrderModel];
    for (const order of orders) await writeOrder(shop.tableName, order);
    const shipped = await updateOrderStatus(dataSources(shop.tableName), {
      orderId: orders[1].orderId,
      status: 'SHIPPED',
    });
    expect(shipped.ok).toBe(true);
    const records = (await readStream(shop.tableName)).records.filter((record) =>
      orders.some((order) => isDetailsOf(order)(record)),
    );
    expect(records.map((record) => record.eventName)).toEqual(['INSERT', 'INSERT', 'MODIFY']);
    // The shipping moves no counter: its event is ready at once, yet must wait for the first
    // order's soldCount transaction (one per order here), which sees nothing published yet.
    const log = new EventLog();
    const seenByFirst: number[] = [];
    const watched = createDynamo({ endpoint: endpoint(), region });
    watched.client.middlewareStack.add(
      ((next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
        const input = JSON.stringify((args as { input?: unknown }).input ?? null);
        if (!input.includes(`PRODUCT#${first.productId}`)) return next(args);
        seenByFirst.push(log.events.length);
        const output = await next(args);
        seenByFirst.push(log.events.length);
        return output;
      }) as never,
      { step: 'finalizeRequest', name: 'watchFirstOrder' },
    );
    try {
      const result = await processRecords(records, {
        doc: watched.doc,
        tableName: shop.tableName,
        publish: log.publish,
        maxLinesPerTransaction: 1,
      });
      expect(result.failures).toEqual([]);
      expect(seenByFirst).toEqual([0, 0]);
      expect(log.summary()).toEqual([
        `ORDER_PLACED ${orders[0].orderId} PLACED`,
        `ORDER_PLACED ${orders[1].orderId} PLACED`,
        `ORDER_STATUS_CHANGED ${orders[1].orderId} SHIPPED`,
      ]);
      expect(log.events.map((event) => event.seq)).toEqual(records.map((record) => record.dynamodb?.SequenceNumber));

      // The second event cannot be published: the third is held back, the retry starts at the second.
      const again = new EventLog();
      const failing = await processRecords(records, {
        doc: dynamo.doc,
        tableName: shop.tableName,
        publish: (event) => {
          if (placed(orders[1])(event)) throw new Error('injected: the bus refused');
          again.publish(event);
        },
      });
      expect(failing.failures.map((failure) => failure.index)).toEqual([1]);
      expect(again.events.map((event) => event.node.orderId)).toEqual([orders[0].orderId]);
    } finally {
      watched.client.destroy();
    }
  });
});

describe('checkpoints', () => {
  it('are written behind the next page, in order, each at a record already applied', async () => {
    const shop = await openShop(1);
    const product = shop.products[0] as ProductModel;
    // Every checkpoint write is held until released, and the positions written are recorded.
    const written: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const own = createDynamo({ endpoint: endpoint(), region });
    own.client.middlewareStack.add(
      ((next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
        // Marshalled or not, depending on where the document client's step sits: read either.
        const text = (value: unknown) => (typeof value === 'string' ? value : (value as { S?: string } | undefined)?.S);
        const item = (args as { input?: { Item?: Record<string, unknown> } }).input?.Item;
        if (text(item?.PK) !== STREAM_CHECKPOINT_PK) return next(args);
        await held;
        const output = await next(args);
        written.push(text(item?.sequenceNumber) ?? '');
        return output;
      }) as never,
      { step: 'initialize', name: 'holdCheckpoints' },
    );
    const log = new EventLog();
    const consumer = await startConsumer(shop.tableName, log, { dynamo: own, pollIntervalMs: 20 });
    try {
      const [first, second] = [orderOf(shop.user, [[product, 1]]), orderOf(shop.user, [[product, 2]])];
      await writeOrder(shop.tableName, first);
      await log.until(placed(first));
      // Polls that find nothing new while that checkpoint is held go on all the same: the
      // consumer keeps its rounds (a machine slower to write the next order than the poll
      // interval sees such polls).
      let rounds = 0;
      await waitForEmit(consumer, 'round', () => ++rounds >= 3, 5000, 'three rounds past a held checkpoint');
      // The first page's checkpoint is still held: the next page goes on all the same.
      await writeOrder(shop.tableName, second);
      await log.until(placed(second));
      expect(written).toEqual([]);
      expect(await soldCountOf(shop.tableName, product)).toBe(3);

      release();
      await consumer.waitUntilCaughtUp();
      const positions = written.map((seq) => BigInt(seq));
      expect(positions.length).toBeGreaterThan(0);
      expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      // The last one covers the second order: its record is applied, and the stream holds nothing later but checkpoints.
      const records = (await readStream(shop.tableName)).records;
      const secondRecord = records.find((record) => isDetailsOf(second)(record));
      expect(positions.at(-1)).toBeGreaterThanOrEqual(BigInt(secondRecord?.dynamodb?.SequenceNumber ?? '0'));
      expect(
        records
          .filter((record) => BigInt(record.dynamodb?.SequenceNumber ?? '0') > (positions.at(-1) ?? 0n))
          .every((record) => record.dynamodb?.Keys?.PK?.S === STREAM_CHECKPOINT_PK),
      ).toBe(true);
    } finally {
      release();
      await consumer.stop();
      own.client.destroy();
    }
  });
});

describe('two pages under way', () => {
  it("applies the next page while one is held, publishes its events after that one's, and reads it again when that one fails", async () => {
    const shop = await openShop(2);
    const [first, second] = shop.products as [ProductModel, ProductModel];
    // The first order's soldCount transaction is held until released; the second one's is noted.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let heldNow: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (heldNow = resolve));
    let secondDone: () => void = () => undefined;
    const secondApplied = new Promise<void>((resolve) => (secondDone = resolve));
    const own = createDynamo({ endpoint: endpoint(), region });
    let holding = true;
    own.client.middlewareStack.add(
      ((next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
        const input = JSON.stringify((args as { input?: unknown }).input ?? null);
        if (holding && input.includes(`PRODUCT#${first.productId}`) && input.includes('TransactItems')) {
          holding = false;
          heldNow();
          await released;
        }
        const output = await next(args);
        if (input.includes(`PRODUCT#${second.productId}`) && input.includes('TransactItems')) secondDone();
        return output;
      }) as never,
      { step: 'initialize', name: 'holdFirstOrder' },
    );
    const log = new EventLog();
    let attempts = 0;
    const [a, b] = [orderOf(shop.user, [[first, 1]]), orderOf(shop.user, [[second, 1]])];
    const consumer = await startConsumer(shop.tableName, log, {
      dynamo: own,
      pollIntervalMs: 20,
      backoff: { baseDelayMs: 10, maxDelayMs: 50 },
      // The bus refuses the first order's event once: its page fails at that record.
      publish: (event) => {
        if (placed(a)(event) && attempts++ === 0) throw new Error('injected: the bus refused');
        log.publish(event);
      },
    });
    try {
      // The shop's own page is checkpointed first (caught up says that write is done), so its
      // checkpoint record comes before the first order in the stream. Read after it, that record
      // would make a page of its own behind the held one, and a third page (the second order)
      // is not read while two are under way.
      await consumer.waitUntilCaughtUp();
      await writeOrder(shop.tableName, a);
      await held;
      await writeOrder(shop.tableName, b);
      // The next page is read and applied while the first is held; its event waits.
      await secondApplied;
      expect(log.events).toEqual([]);
      release();
      await log.until(placed(b));
      await consumer.waitUntilCaughtUp();
      // The first page failed at its event, the second was read again after it: each once, in order.
      expect(attempts).toBe(2);
      expectEvents(log, [`ORDER_PLACED ${a.orderId} PLACED`, `ORDER_PLACED ${b.orderId} PLACED`]);
      expect(await soldCountsOf(shop.tableName, [first, second])).toEqual([1, 1]);
    } finally {
      release();
      await consumer.stop();
      own.client.destroy();
    }
  });
});

describe('a restarted consumer', () => {
  it('resumes from its checkpoint: nothing lost, nothing applied twice', async () => {
    const shop = await openShop(1);
    const product = shop.products[0] as ProductModel;
    const before = new EventLog();
    const first = await startConsumer(shop.tableName, before);
    const early = orderOf(shop.user, [[product, 1]]);
    await writeOrder(shop.tableName, early);
    await before.until(placed(early));
    await first.stop(); // finishes and checkpoints the batch it is in

    // Written while no consumer runs.
    const late = [orderOf(shop.user, [[product, 2]]), orderOf(shop.user, [[product, 4]])] as const;
    for (const order of late) await writeOrder(shop.tableName, order);
    await cancel(shop.tableName, early.orderId);

    const after = new EventLog();
    const second = await startConsumer(shop.tableName, after);
    await after.until(placed(late[0]));
    await after.until(placed(late[1]));
    await after.until(changed(early, 'CANCELLED'));
    await second.waitUntilCaughtUp();

    expectEvents(after, [
      `ORDER_PLACED ${late[0].orderId} PLACED`,
      `ORDER_PLACED ${late[1].orderId} PLACED`,
      `ORDER_STATUS_CHANGED ${early.orderId} CANCELLED`,
    ]);
    expect(before.summary()).toEqual([`ORDER_PLACED ${early.orderId} PLACED`]);
    expect(await soldCountOf(shop.tableName, product)).toBe(6);
  });

  it('replays a batch whose checkpoint was lost in a crash, without counting it twice', async () => {
    const shop = await openShop(1);
    const product = shop.products[0] as ProductModel;
    // A consumer whose checkpoint writes all fail, like a process killed right after processing.
    const crashing = createDynamo({ endpoint: endpoint(), region });
    const faults = new Faults();
    faults.attach(crashing.client, 'crashing');
    faults.inject({ kind: 'server-error', commands: ['PutItem', 'TransactWriteItems'], touching: 'CONSUMER#' });
    const before = new EventLog();
    const doomed = await startConsumer(shop.tableName, before, { dynamo: crashing });
    const order = orderOf(shop.user, [[product, 3]]);
    await writeOrder(shop.tableName, order);
    await before.until(placed(order));
    await doomed.stop();
    crashing.client.destroy();
    expect(faults.injected.get('server-error')).toBeGreaterThan(0);
    expect(await soldCountOf(shop.tableName, product)).toBe(3);

    const after = new EventLog();
    const restarted = await startConsumer(shop.tableName, after);
    await after.until(placed(order)); // published again: at least once
    await restarted.waitUntilCaughtUp();
    expect(await soldCountOf(shop.tableName, product)).toBe(3);
  });
});

describe('faults', () => {
  it('survives expired iterators, failing reads and a failing publish without losing or double-counting', async () => {
    const shop = await openShop(1);
    const product = shop.products[0] as ProductModel;
    const faulty = createStreamsClient({ endpoint: endpoint(), region });
    extraClients.push(faulty);
    const faults = new Faults(seededRandom(7));
    faults.attach(faulty, 'streams');
    // The first read fails on every attempt the SDK makes (the streams client makes two): the
    // consumer's own back-off takes over. Then one read in five finds its iterator expired.
    faults.inject({ kind: 'server-error', commands: ['GetRecords'], times: 2 });
    faults.inject({ kind: 'expired-iterator', commands: ['GetRecords'], probability: 0.2 });
    const orders = Array.from({ length: 6 }, (_, i) => orderOf(shop.user, [[product, i + 1]]));
    const unlucky = orders[2] as OrderModel;
    const log = new EventLog();
    let refused = false;
    const consumer = await startConsumer(shop.tableName, log, {
      streams: faulty,
      backoff: { baseDelayMs: 5, maxDelayMs: 50 },
      // The first delivery of one event fails: its record must be retried, not skipped.
      publish: (event) => {
        if (!refused && placed(unlucky)(event)) {
          refused = true;
          throw new Error('injected: subscribers unreachable');
        }
        log.publish(event);
      },
    });
    for (const order of orders) await writeOrder(shop.tableName, order);
    for (const order of orders) await log.until(placed(order));
    await consumer.waitUntilCaughtUp();

    expect(refused).toBe(true);
    expect(faults.injected.get('server-error')).toBe(2);
    expect(faults.injected.get('expired-iterator')).toBeGreaterThan(0);
    expect(await soldCountOf(shop.tableName, product)).toBe(1 + 2 + 3 + 4 + 5 + 6);
    expect(log.events.filter(placed(unlucky))).toHaveLength(1);
  });
});

describe('shard lineage (a fake shard topology: DynamoDB Local never splits or closes a shard)', () => {
  interface FakeShard {
    shardId: string;
    parentShardId?: string;
    closed: boolean;
    records: _Record[];
  }

  /** A streams client answering from `shards` (listed as given), two records a page, logging each call. */
  function fakeStream(shards: FakeShard[]): { client: DynamoDBStreamsClient; calls: string[] } {
    const client = new DynamoDBStreamsClient({
      region,
      endpoint: 'http://127.0.0.1:9',
      credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' },
    });
    extraClients.push(client);
    const calls: string[] = [];
    const byId = new Map(shards.map((shard) => [shard.shardId, shard]));
    const reply = (output: object) => ({ output: { $metadata: {}, ...output }, response: {} }) as never;
    client.middlewareStack.add(
      (_next, context) => async (args) => {
        const input = args.input as Record<string, string | undefined>;
        if (context.commandName === 'DescribeStreamCommand') {
          calls.push('describe');
          return reply({
            StreamDescription: {
              Shards: shards.map((shard) => ({
                ShardId: shard.shardId,
                ParentShardId: shard.parentShardId,
                SequenceNumberRange: {
                  StartingSequenceNumber: shard.records[0]?.dynamodb?.SequenceNumber,
                  EndingSequenceNumber: shard.closed ? shard.records.at(-1)?.dynamodb?.SequenceNumber : undefined,
                },
              })),
            },
          });
        }
        if (context.commandName === 'GetShardIteratorCommand') {
          const shard = byId.get(input.ShardId as string) as FakeShard;
          const at = shard.records.findIndex((record) => record.dynamodb?.SequenceNumber === input.SequenceNumber);
          const start = {
            TRIM_HORIZON: 0,
            LATEST: shard.records.length,
            AT_SEQUENCE_NUMBER: at,
            AFTER_SEQUENCE_NUMBER: at + 1,
          }[input.ShardIteratorType as string];
          calls.push(
            `iterator ${shard.shardId} ${input.ShardIteratorType}${input.SequenceNumber ? ` ${input.SequenceNumber}` : ''}`,
          );
          return reply({ ShardIterator: `${shard.shardId}|${start}` });
        }
        if (context.commandName !== 'GetRecordsCommand') throw new Error(`unexpected ${context.commandName}`);
        const [shardId, start] = (input.ShardIterator as string).split('|') as [string, string];
        const shard = byId.get(shardId) as FakeShard;
        const page = shard.records.slice(Number(start), Number(start) + 2);
        const next = Number(start) + page.length;
        calls.push(`records ${shardId} ${page.length}`);
        // A closed shard read to its end has no next iterator.
        return reply({
          Records: page,
          NextShardIterator: shard.closed && next >= shard.records.length ? undefined : `${shardId}|${next}`,
        });
      },
      { step: 'initialize', name: 'fakeStream' },
    );
    return { client, calls };
  }

  const change = (sequenceNumber: string, order: OrderModel, previous?: OrderModel): _Record => ({
    eventID: `event-${sequenceNumber}`,
    eventName: previous ? 'MODIFY' : 'INSERT',
    dynamodb: {
      ApproximateCreationDateTime: new Date(),
      Keys: marshall(orderKey(order.orderId)),
      NewImage: marshall(orderToDetailsItem(order)),
      ...(previous ? { OldImage: marshall(orderToDetailsItem(previous)) } : {}),
      SequenceNumber: sequenceNumber,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  });

  let shop: Awaited<ReturnType<typeof openShop>>;
  let shards: FakeShard[];
  let first: OrderModel;
  let second: OrderModel;

  beforeAll(async () => {
    shop = await openShop(1);
    const product = shop.products[0] as ProductModel;
    first = orderOf(shop.user, [[product, 2]]);
    second = orderOf(shop.user, [[product, 5]]);
    const shipped: OrderModel = { ...first, status: 'SHIPPED', version: 2 };
    const cancelled: OrderModel = { ...second, status: 'CANCELLED', version: 2 };
    // The child is listed first: the consumer must go by lineage, not by list order.
    shards = [
      {
        shardId: 'shardId-child',
        parentShardId: 'shardId-parent',
        closed: false,
        records: [change('200', shipped, first), change('201', cancelled, second), change('202', second, second)],
      },
      { shardId: 'shardId-parent', closed: true, records: [change('100', first), change('101', second)] },
    ];
  });

  it('reads a child shard only after its parent, and checkpoints both', async () => {
    const { client, calls } = fakeStream(shards);
    const log = new EventLog();
    const consumer = await startConsumer(shop.tableName, log, { streams: client, consumerName: 'lineage' });
    await log.until(changed(second, 'CANCELLED'));
    await consumer.waitUntilCaughtUp();
    await consumer.stop();

    // Both placements (the parent's records) before both changes (the child's).
    expect(log.summary().slice(0, 2).sort()).toEqual(
      [`ORDER_PLACED ${first.orderId} PLACED`, `ORDER_PLACED ${second.orderId} PLACED`].sort(),
    );
    expect(log.summary().slice(2).sort()).toEqual(
      [`ORDER_STATUS_CHANGED ${first.orderId} SHIPPED`, `ORDER_STATUS_CHANGED ${second.orderId} CANCELLED`].sort(),
    );
    expect(calls.indexOf('iterator shardId-child TRIM_HORIZON')).toBeGreaterThan(
      calls.indexOf('records shardId-parent 2'),
    );
    expect(await soldCountOf(shop.tableName, shop.products[0] as ProductModel)).toBe(2);

    const { Items } = await dynamo.doc.send(
      new QueryCommand({
        TableName: shop.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': 'META#stream', ':prefix': 'CONSUMER#lineage#' },
        ConsistentRead: true,
      }),
    );
    expect(Items?.map(({ shardId, sequenceNumber, finished }) => ({ shardId, sequenceNumber, finished }))).toEqual([
      { shardId: 'shardId-child', sequenceNumber: '202', finished: false },
      { shardId: 'shardId-parent', sequenceNumber: '101', finished: true },
    ]);
  });

  it('after a restart, skips the finished parent and continues the child after its checkpoint', async () => {
    const { client, calls } = fakeStream(shards);
    const log = new EventLog();
    const consumer = await startConsumer(shop.tableName, log, { streams: client, consumerName: 'lineage' });
    await consumer.waitUntilCaughtUp();
    await consumer.stop();
    expect(calls.filter((call) => call.startsWith('iterator'))).toEqual([
      'iterator shardId-child AFTER_SEQUENCE_NUMBER 202',
    ]);
    expect(log.events).toEqual([]);
  });

  it('with initialPosition LATEST, a brand-new consumer skips closed shards and starts open ones at LATEST', async () => {
    const { client, calls } = fakeStream(shards);
    const log = new EventLog();
    const consumer = await startConsumer(shop.tableName, log, {
      streams: client,
      consumerName: 'live',
      initialPosition: 'LATEST',
    });
    await consumer.waitUntilCaughtUp();
    await consumer.stop();
    expect(calls.filter((call) => call.startsWith('iterator'))).toEqual(['iterator shardId-child LATEST']);
    expect(log.events).toEqual([]);
  });
});

describe('the Lambda handler', () => {
  it('processes a real stream batch, reports nothing failed, and a redelivery changes nothing', async () => {
    const shop = await openShop(2);
    const [first, second] = shop.products as [ProductModel, ProductModel];
    const kept = orderOf(shop.user, [[first, 2]]);
    const cancelled = orderOf(shop.user, [
      [first, 1],
      [second, 5],
    ]);
    await writeOrder(shop.tableName, kept);
    await writeOrder(shop.tableName, cancelled);
    await cancel(shop.tableName, cancelled.orderId);
    const { streamArn, records } = await readStream(shop.tableName);
    const event = lambdaEvent(records, streamArn);
    const log = new EventLog();
    const handler = createStreamHandler({ doc: dynamo.doc, tableName: shop.tableName, publish: log.publish });

    expect(await handler(event)).toEqual({ batchItemFailures: [] });
    expectEvents(log, [
      `ORDER_PLACED ${kept.orderId} PLACED`,
      `ORDER_PLACED ${cancelled.orderId} PLACED`,
      `ORDER_STATUS_CHANGED ${cancelled.orderId} CANCELLED`,
    ]);
    // Lambda's epoch seconds arrive as the same instant the SDK reported.
    expect(log.events.find(placed(kept))?.at).toBe(
      records.find(isDetailsOf(kept))?.dynamodb?.ApproximateCreationDateTime?.toISOString(),
    );
    expect(await soldCountsOf(shop.tableName, [first, second])).toEqual([2, 0]);

    expect(await handler(event)).toEqual({ batchItemFailures: [] });
    expect(await soldCountsOf(shop.tableName, [first, second])).toEqual([2, 0]);
  });

  it('reports the first failed record, and a retry from it completes the batch exactly once', async () => {
    const shop = await openShop(1);
    const product = shop.products[0] as ProductModel;
    const orders = [1, 2, 3].map((quantity) => orderOf(shop.user, [[product, quantity]]));
    for (const order of orders) await writeOrder(shop.tableName, order);
    const { streamArn, records } = await readStream(shop.tableName);
    const failing = orders[1] as OrderModel;
    const log = new EventLog();
    let down = true;
    const handler = createStreamHandler({
      doc: dynamo.doc,
      tableName: shop.tableName,
      publish: (event) => {
        if (down && placed(failing)(event)) throw new Error('injected: subscribers unreachable');
        log.publish(event);
      },
    });

    const response = await handler(lambdaEvent(records, streamArn));
    const failedInsert = records.find(isDetailsOf(failing));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failedInsert?.dynamodb?.SequenceNumber }] });

    // Lambda retries from the reported record on.
    down = false;
    const rest = records.slice(records.indexOf(failedInsert as _Record));
    expect(await handler(lambdaEvent(rest, streamArn))).toEqual({ batchItemFailures: [] });
    expect(log.events.filter(placed(failing))).toHaveLength(1);
    expect(await soldCountOf(shop.tableName, product)).toBe(6);
  });
});
