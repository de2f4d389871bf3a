/**
 * The soldCount changes of a page of stream records written together (src/streams/soldCountBatch.ts),
 * on DynamoDB Local's real stream: a hot product's units summed into one action, an order placed
 * and cancelled in one page written in two transactions in that order, and exactly once when a
 * page is cut short: a transaction applied whose answer was lost (a crash mid-page), one refused
 * for conflicts past its retries, and a line applied already by an earlier holder.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { _Record, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import type { ChangeEvent } from '../src/events/changeEvent.js';
import { processRecords } from '../src/streams/processor.js';
import type { ProcessResult } from '../src/streams/processor.js';
import { updateSoldCount } from '../src/streams/soldCountBatch.js';
import { createStreamsClient } from '../src/streams/streamsClient.js';
import { orderToDetailsItem } from '../src/table/codecs.js';
import { buyerKey } from '../src/table/entities/review.js';
import { orderKey, productKey, productSaleKey } from '../src/table/keys.js';
import type { OrderModel, ProductModel, UserModel } from '../src/table/models.js';
import { aProduct, aUser, anOrder, orderIdOf, store } from './support/factories.js';
import { injectTransactionConflicts } from './support/faults.js';
import type { ConflictInjection, TransactInput } from './support/faults.js';
import { endpoint } from './support/harness.js';
import { readStream as readStreamOf } from './support/streamRecords.js';
import { getItem } from './support/writes.js';

const region = 'us-east-1';
let dynamo: Dynamo;
let streams: DynamoDBStreamsClient;
const tables: string[] = [];
const clients: Dynamo[] = [];

beforeAll(() => {
  dynamo = createDynamo({ endpoint: endpoint(), region });
  streams = createStreamsClient({ endpoint: endpoint(), region });
});

afterAll(async () => {
  for (const tableName of tables) await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  for (const client of clients) client.client.destroy();
  streams.destroy();
  dynamo.client.destroy();
});

/** A table of its own (its own stream) holding `users` and `products`. */
async function openShop(users: UserModel[], products: ProductModel[]): Promise<string> {
  const tableName = `t-batch-${randomUUID()}`;
  await ensureTable(dynamo.client, tableName, endpoint());
  tables.push(tableName);
  await store(dynamo.doc, tableName, { users, products });
  return tableName;
}

/** The order records of the table's stream (each order's details item), in stream order. */
async function orderRecords(tableName: string): Promise<_Record[]> {
  const { records } = await readStreamOf(dynamo.client, streams, tableName);
  return records.filter((record) => record.dynamodb?.Keys?.PK?.S?.startsWith('ORDER#'));
}

/** A client whose TransactWriteItems calls are recorded, and cancelled or answered as `injection` says. */
function watchedClient(injection: ConflictInjection): Dynamo {
  const client = createDynamo({ endpoint: endpoint(), region });
  injectTransactionConflicts(injection)(client.client);
  clients.push(client);
  return client;
}

const noInjection = (): ConflictInjection => ({
  conflictsLeft: 0,
  conflictingAction: 0,
  sent: [],
  beforeSend: undefined,
});

async function soldCountOf(tableName: string, product: ProductModel): Promise<number> {
  return Number((await getItem(dynamo.doc, tableName, productKey(product.productId)))?.soldCount ?? 0);
}

/** The order ids of the events, in publish order. */
const idsOf = (events: readonly ChangeEvent[]) => events.map((event) => orderIdOf(event));

interface SentAction {
  Put?: { Item?: { entityType?: string } };
  Update?: { Key?: { PK?: string }; UpdateExpression?: string };
}

/** How many sale markers each transaction wrote (put, or moved to CANCELLED): the lines it carried. */
const markersPer = (sent: readonly TransactInput[]) =>
  sent.map(
    (input) =>
      (input.TransactItems as SentAction[]).filter(
        (action) =>
          action.Put?.Item?.entityType === 'ProductSale' || action.Update?.UpdateExpression?.includes('#state'),
      ).length,
  );

describe('a page of orders', () => {
  it('goes out in one transaction, a hot product summed; an order cancelled in the same page takes a second', async () => {
    const [ann, bob] = [aUser(), aUser()];
    const [hot, other] = [aProduct({ stock: 1000 }), aProduct({ stock: 1000 })];
    const tableName = await openShop([ann, bob], [hot, other]);
    const units = (order: OrderModel, quantity: number) => ({
      ...order,
      items: order.items.map((line) => ({ ...line, quantity })),
    });
    const orders = [
      units(anOrder(ann, [hot]), 2),
      units(anOrder(bob, [hot]), 3),
      anOrder(ann, [other, hot]), // shares ann's buyer record of `hot` with the first: both add to it
      anOrder(bob, [other]),
    ] as [OrderModel, OrderModel, OrderModel, OrderModel];
    await store(dynamo.doc, tableName, { orders });
    // The last one is cancelled in the same page: its marker is written twice, in two transactions.
    await dynamo.doc.send(
      new PutCommand({ TableName: tableName, Item: orderToDetailsItem({ ...orders[3], status: 'CANCELLED' }) }),
    );
    const records = await orderRecords(tableName);
    expect(records.map((record) => record.eventName)).toEqual(['INSERT', 'INSERT', 'INSERT', 'INSERT', 'MODIFY']);

    const injection = noInjection();
    const published: ChangeEvent[] = [];
    const deps = {
      doc: watchedClient(injection).doc,
      tableName,
      publish: (event: ChangeEvent) => void published.push(event),
    };
    const once = await processRecords(records, deps);
    expect(once).toMatchObject({ failures: [], soldCountChanges: 6, duplicates: 0 });
    expect(markersPer(injection.sent)).toEqual([5, 1]);
    // One action for the hot product in the first transaction, though three orders moved it.
    expect(JSON.stringify(injection.sent[0]).split(`"PRODUCT#${hot.productId}","SK":"DETAILS"`)).toHaveLength(2);
    expect([await soldCountOf(tableName, hot), await soldCountOf(tableName, other)]).toEqual([6, 1]);
    const annBought = await getItem(dynamo.doc, tableName, buyerKey(hot.productId, ann.userId));
    expect([...(annBought?.orderIds as Set<string>)].sort()).toEqual([orders[0].orderId, orders[2].orderId].sort());
    const bobBought = await getItem(dynamo.doc, tableName, buyerKey(other.productId, bob.userId));
    expect([...((bobBought?.orderIds as Set<string> | undefined) ?? [])]).toEqual([]);
    // In stream order (a batch write need not keep its own), the cancellation last.
    const idOf = (record: _Record) =>
      orders.find((order) => orderKey(order.orderId).PK === record.dynamodb?.Keys?.PK?.S);
    expect(idsOf(published)).toEqual(records.map((record) => idOf(record)?.orderId));
    expect(idOf(records[4] as _Record)).toBe(orders[3]);

    // Delivered again (a replay after a crash): every marker is there, nothing moves.
    const again = await processRecords(records, deps);
    expect(again).toMatchObject({ failures: [], soldCountChanges: 0, duplicates: 5 });
    expect([await soldCountOf(tableName, hot), await soldCountOf(tableName, other)]).toEqual([6, 1]);
    expect(await getItem(dynamo.doc, tableName, productSaleKey(other.productId, orders[3].orderId))).toMatchObject({
      state: 'CANCELLED',
    });
  });
});

describe('a page cut short', () => {
  /** Five one-unit orders of one product, two lines per transaction: three transactions. */
  async function fiveOrders() {
    const user = aUser();
    const product = aProduct({ stock: 1000 });
    const tableName = await openShop([user], [product]);
    const written = Array.from({ length: 5 }, () => anOrder(user, [product]));
    await store(dynamo.doc, tableName, { orders: written });
    const records = await orderRecords(tableName);
    expect(records).toHaveLength(5);
    // The orders in the stream's order (a batch write need not keep its own).
    const orders = records.map((record) =>
      written.find((order) => orderKey(order.orderId).PK === record.dynamodb?.Keys?.PK?.S),
    ) as OrderModel[];
    return { tableName, product, orders, records };
  }

  /** Runs the page from the failed record on, as the next poll of the shard does. */
  async function retryFrom(result: ProcessResult, records: _Record[], tableName: string, published: ChangeEvent[]) {
    const from = result.failures[0]?.index ?? records.length;
    return processRecords(records.slice(from), {
      doc: dynamo.doc,
      tableName,
      publish: (event) => void published.push(event),
      maxLinesPerTransaction: 2,
    });
  }

  it('by a crash after its second transaction was applied: the retry counts nothing twice', async () => {
    const { tableName, product, orders, records } = await fiveOrders();
    let calls = 0;
    const lost = createDynamo({ endpoint: endpoint(), region });
    clients.push(lost);
    lost.client.middlewareStack.add(
      ((next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
        const output = await next(args);
        // The write is done; the answer never arrives (a crash, or a network that dropped it).
        if (++calls === 2) throw new Error('injected: the response was lost');
        return output;
      }) as never,
      { step: 'initialize', name: 'loseSecondAnswer' },
    );
    const published: ChangeEvent[] = [];
    const result = await processRecords(records, {
      doc: lost.doc,
      tableName,
      publish: (event) => void published.push(event),
      maxLinesPerTransaction: 2,
    });
    expect(calls).toBe(2);
    expect(result.failures.map((failure) => failure.index)).toEqual([2]);
    expect(String(result.failures[0]?.error)).toContain('the response was lost');
    // Nothing after the failed record went out, though the third and fourth are applied.
    expect(idsOf(published)).toEqual([orders[0]?.orderId, orders[1]?.orderId]);
    expect(await soldCountOf(tableName, product)).toBe(4);

    const retry = await retryFrom(result, records, tableName, published);
    expect(retry).toMatchObject({ failures: [], soldCountChanges: 1, duplicates: 2 });
    expect(await soldCountOf(tableName, product)).toBe(5);
    expect(idsOf(published)).toEqual(orders.map((order) => order.orderId));
  });

  it('by conflicts past their retries: nothing of that transaction or later is written, and the retry applies it once', async () => {
    const { tableName, product, orders, records } = await fiveOrders();
    const injection = noInjection();
    // The first transaction goes through; the next five attempts (all of the second's) conflict.
    injection.beforeSend = () => {
      if (injection.sent.length === 1) injection.conflictsLeft = 5;
      return Promise.resolve();
    };
    const published: ChangeEvent[] = [];
    const result = await processRecords(records, {
      doc: watchedClient(injection).doc,
      tableName,
      publish: (event) => void published.push(event),
      maxLinesPerTransaction: 2,
    });
    expect(injection.sent).toHaveLength(6);
    expect(result.failures.map((failure) => failure.index)).toEqual([2]);
    expect(idsOf(published)).toEqual([orders[0]?.orderId, orders[1]?.orderId]);
    expect(await soldCountOf(tableName, product)).toBe(2);
    for (const order of orders.slice(2)) {
      expect(await getItem(dynamo.doc, tableName, productSaleKey(product.productId, order.orderId))).toBeUndefined();
    }

    const retry = await retryFrom(result, records, tableName, published);
    expect(retry).toMatchObject({ failures: [], soldCountChanges: 3, duplicates: 0 });
    expect(await soldCountOf(tableName, product)).toBe(5);
    expect(idsOf(published)).toEqual(orders.map((order) => order.orderId));
  });

  it('by a line an earlier holder applied: the transaction goes again without it, and it is not counted twice', async () => {
    const { tableName, product, orders, records } = await fiveOrders();
    // The middle order was counted before (a holder that crashed before its checkpoint).
    await updateSoldCount(dynamo.doc, tableName, orders[2] as OrderModel, 'SOLD');
    const injection = noInjection();
    const published: ChangeEvent[] = [];
    const result = await processRecords(records, {
      doc: watchedClient(injection).doc,
      tableName,
      publish: (event) => void published.push(event),
    });
    expect(result).toMatchObject({ failures: [], soldCountChanges: 4, duplicates: 1 });
    // Refused for that marker, then sent without it.
    expect(markersPer(injection.sent)).toEqual([5, 4]);
    expect(await soldCountOf(tableName, product)).toBe(5);
    expect(idsOf(published)).toEqual(orders.map((order) => order.orderId));
  });
});
