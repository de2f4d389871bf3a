/**
 * The write invariants under real concurrency: requests fired together at the HTTP API,
 * DynamoDB Local behind it, the table inspected directly afterwards.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { orderIdFor } from '../src/writes/placeOrder.js';
import type { Item } from '../src/table/codecs.js';
import { aProduct, aUser, store } from './support/factories.js';
import { startTestServer } from './support/harness.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';
import {
  CANCEL_ORDER,
  CREATE_USER,
  getItem,
  PLACE_ORDER,
  scanTable,
  stockOf,
  UPDATE_ORDER_STATUS,
} from './support/writes.js';
import type { CreateUserResult, OrderChangeResult, PlaceOrderResult } from './support/writes.js';

let server: TestServer;

/**
 * While armed, TransactWriteItems calls wait until `reads` BatchGetItem calls have been
 * answered: those readers all saw the stock before anyone took it, so the race is certain to
 * happen inside the transactions, however the machine schedules the requests.
 */
const barrier = {
  reads: 0,
  open: Promise.resolve(),
  release: () => {},
  arm(reads: number) {
    this.reads = reads;
    this.open = new Promise<void>((resolve) => {
      this.release = resolve;
    });
  },
};

function holdWritesUntilReads(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (barrier.reads > 0 && context.commandName === 'TransactWriteItemsCommand') await barrier.open;
      const result = await next(args);
      if (barrier.reads > 0 && context.commandName === 'BatchGetItemCommand' && --barrier.reads === 0) {
        barrier.release();
      }
      return result;
    },
    { step: 'initialize', name: 'testHoldWritesUntilReads' },
  );
}

beforeAll(async () => {
  server = await startTestServer({ configureClient: holdWritesUntilReads });
});
afterAll(() => server.stop());
afterEach(() => {
  vi.useRealTimers();
});

const suffix = () => randomUUID().slice(0, 8);

const placeOrder = (input: {
  userId: string;
  items: { productId: string; quantity: number }[];
  idempotencyKey: string;
}) => server.gql<{ placeOrder: PlaceOrderResult }>(PLACE_ORDER, { input });

/** The payload of a response that must have no GraphQL errors. */
function payloadOf<T>(response: GraphQLResponse<Record<string, T>>, field: string): T {
  expect(response.errors).toBeUndefined();
  const payload = response.data?.[field];
  if (payload === undefined) throw new Error(`no ${field} in the response`);
  return payload;
}

async function userOrders(userId: string): Promise<Item[]> {
  const result = await server.dynamo.doc.send(
    new QueryCommand({
      TableName: server.tableName,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :order)',
      ExpressionAttributeValues: { ':pk': `USER#${userId}`, ':order': 'ORDER#' },
      ConsistentRead: true,
    }),
  );
  return result.Items ?? [];
}

const profileOf = (userId: string) =>
  getItem(server.dynamo.doc, server.tableName, { PK: `USER#${userId}`, SK: 'PROFILE' });

const RACERS_AHEAD = 25;

describe('50 clients racing for a product with stock 20', () => {
  // 50 different users, one unit each: every request is a distinct order, none a replay.
  const product = aProduct({ productId: `race-${suffix()}`, stock: 20 });
  const users = Array.from({ length: 50 }, (_, i) => aUser({ userId: `racer-${i}-${suffix()}` }));
  let results: PlaceOrderResult[];
  let requests: (number | undefined)[];
  let observedStock: number[];
  let raceMs: number;

  beforeAll(async () => {
    await store(server.dynamo.doc, server.tableName, { users, products: [product] });
    let racing = true;
    observedStock = [];
    // A reader polls the stock for as long as the race runs: every value it sees must be legal.
    const watcher = (async () => {
      while (racing) observedStock.push(await stockOf(server.dynamo.doc, server.tableName, product.productId));
    })();
    // Half of the clients read before any transaction runs; the other half race the commits.
    barrier.arm(RACERS_AHEAD);
    const started = performance.now();
    const responses = await Promise.all(
      users.map((user) =>
        placeOrder({
          userId: user.userId,
          items: [{ productId: product.productId, quantity: 1 }],
          idempotencyKey: 'race',
        }),
      ),
    );
    raceMs = performance.now() - started;
    racing = false;
    await watcher;
    results = responses.map((response) => payloadOf(response, 'placeOrder'));
    requests = responses.map((response) => response.extensions?.cost?.dynamodb.requests);
    console.info(`50-client race for 20 units: ${Math.round(raceMs)} ms`);
  });

  it('lets exactly 20 orders succeed', () => {
    const placed = results.filter((result) => result.order !== null);
    expect(placed).toHaveLength(20);
    expect(placed.every((result) => result.userErrors.length === 0 && !result.replayed)).toBe(true);
    expect(new Set(placed.map((result) => result.order?.orderId)).size).toBe(20);
  });

  it('refuses the other 30 with INSUFFICIENT_STOCK on items.0.quantity', () => {
    const refused = results.filter((result) => result.order === null);
    expect(refused).toHaveLength(30);
    for (const result of refused) {
      expect(result.userErrors).toEqual([
        { code: 'INSUFFICIENT_STOCK', field: ['items', '0', 'quantity'], message: expect.any(String) },
      ]);
    }
  });

  it('really raced: some losers passed the stock read and were refused by the transaction', () => {
    // A loser refused by its read costs 2 requests (BatchGetItem, then the consistent re-read
    // of its idempotency record); one refused by the transaction costs 3 (BatchGetItem,
    // TransactWriteItems, the re-read).
    expect(requests.filter((count, i) => results[i]?.order === null).every((count) => count === 2 || count === 3)).toBe(
      true,
    );
    const refusedByTransaction = results.filter((result, i) => result.order === null && requests[i] === 3);
    // The 25 who read first all saw 20 units, so at least 5 of them lost inside a transaction.
    expect(refusedByTransaction.length).toBeGreaterThanOrEqual(RACERS_AHEAD - 20);
  });

  it('ends with stock 0 and never showed a negative or rising stock', async () => {
    expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(0);
    expect(observedStock.length).toBeGreaterThan(0);
    expect(observedStock.every((stock) => stock >= 0 && stock <= 20)).toBe(true);
    expect(observedStock).toEqual([...observedStock].sort((a, b) => b - a));
  });

  it('stores exactly the 20 orders it answered with, each counted on its user', async () => {
    const winners = users.filter((_, i) => results[i]?.order !== null);
    const losers = users.filter((_, i) => results[i]?.order === null);
    const winnerOrders = await Promise.all(winners.map((user) => userOrders(user.userId)));
    const loserOrders = await Promise.all(losers.map((user) => userOrders(user.userId)));
    expect(winnerOrders.map((orders) => orders.length)).toEqual(winners.map(() => 1));
    expect(loserOrders.flat()).toEqual([]);
    const profiles = await Promise.all(users.map((user) => profileOf(user.userId)));
    expect(profiles.map((profile) => profile?.orderCount)).toEqual(results.map((result) => (result.order ? 1 : 0)));
  });
});

describe('10 concurrent createUser calls with one email', () => {
  const email = `contested-${suffix()}@example.com`;
  // The same address in different cases: emails are compared lower-cased.
  const spellings = (i: number) => (i % 2 === 0 ? email : email.toUpperCase());
  const userIds = Array.from({ length: 10 }, (_, i) => `signup-${i}-${suffix()}`);
  let results: CreateUserResult[];

  beforeAll(async () => {
    const responses = await Promise.all(
      userIds.map((userId, i) =>
        server.gql<{ createUser: CreateUserResult }>(CREATE_USER, {
          input: { userId, email: spellings(i), name: `Contender ${i}` },
        }),
      ),
    );
    results = responses.map((response) => payloadOf(response, 'createUser'));
  });

  const winnerId = () => {
    const winners = results.flatMap((result) => (result.user ? [result.user.userId] : []));
    expect(winners).toHaveLength(1);
    return winners[0] as string;
  };

  it('lets exactly one succeed and refuses 9 with EMAIL_TAKEN', () => {
    const winner = results.find((result) => result.user !== null);
    expect(winner?.user?.email).toBe(email);
    expect(winner?.userErrors).toEqual([]);
    const refused = results.filter((result) => result.user === null);
    expect(refused).toHaveLength(9);
    for (const result of refused) {
      expect(result.userErrors).toEqual([{ code: 'EMAIL_TAKEN', field: ['email'], message: expect.any(String) }]);
    }
  });

  it('leaves exactly one email guard, naming the winner', async () => {
    const all = await scanTable(server.dynamo.doc, server.tableName);
    const guards = all.filter((item) => String(item.PK).toLowerCase() === `email#${email}`);
    expect(guards).toEqual([expect.objectContaining({ PK: `EMAIL#${email}`, SK: 'UNIQUE', userId: winnerId() })]);
  });

  it("stores only the winner's profile", async () => {
    const profiles = await Promise.all(userIds.map((userId) => profileOf(userId)));
    const stored = profiles.flatMap((profile) => (profile ? [profile.userId] : []));
    expect(stored).toEqual([winnerId()]);
  });

  it('finds the winner by the email, in any case', async () => {
    const response = await server.gql<{ userByEmail: { userId: string } | null }>(
      'query($email: String!) { userByEmail(email: $email) { userId } }',
      { email: email.toUpperCase() },
    );
    expect(response.data?.userByEmail?.userId).toBe(winnerId());
  });
});

describe('the same placeOrder sent 5 times at once with one idempotencyKey', () => {
  async function fireDuplicates(stock: number, quantity: number) {
    const user = aUser();
    const product = aProduct({ stock });
    await store(server.dynamo.doc, server.tableName, { users: [user], products: [product] });
    const input = {
      userId: user.userId,
      items: [{ productId: product.productId, quantity }],
      idempotencyKey: `dup-${suffix()}`,
    };
    const responses = await Promise.all(Array.from({ length: 5 }, () => placeOrder(input)));
    return { user, product, results: responses.map((response) => payloadOf(response, 'placeOrder')) };
  }

  it('answers all 5 with the same order, one placed and four replayed', async () => {
    const { results } = await fireDuplicates(10, 3);
    expect(results.every((result) => result.userErrors.length === 0)).toBe(true);
    expect(new Set(results.map((result) => result.order?.orderId)).size).toBe(1);
    expect(results.map((result) => result.replayed).sort()).toEqual([false, true, true, true, true]);
  });

  it('stores one order, takes the stock once and counts the order once', async () => {
    const { user, product, results } = await fireDuplicates(10, 3);
    const orderId = results[0]?.order?.orderId as string;
    const orders = await userOrders(user.userId);
    expect(orders.map((order) => order.orderId)).toEqual([orderId]);
    expect(await getItem(server.dynamo.doc, server.tableName, { PK: `ORDER#${orderId}`, SK: 'DETAILS' })).toMatchObject(
      { orderId, userId: user.userId, status: 'PLACED' },
    );
    expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(7);
    expect((await profileOf(user.userId))?.orderCount).toBe(1);
  });

  it('answers the duplicates as replays even when the first took the last units', async () => {
    const { product, results } = await fireDuplicates(3, 3);
    expect(results.map((result) => result.userErrors)).toEqual([[], [], [], [], []]);
    expect(new Set(results.map((result) => result.order?.orderId)).size).toBe(1);
    expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(0);
  });

  // Same instant, same request: the transactions the five requests build are byte-for-byte
  // equal, ClientRequestToken included, so DynamoDB answers the later ones as successes. The
  // instant is just after the real one: the test's token was issued before it (a token issued
  // in the future is refused).
  const freezeClock = () => vi.useFakeTimers({ toFake: ['Date'], now: new Date(Date.now() + 60_000) });

  it('stores one order and takes the stock once even when all arrive in the same millisecond', async () => {
    freezeClock();
    const { user, product, results } = await fireDuplicates(10, 2);
    expect(results.map((result) => result.userErrors)).toEqual([[], [], [], [], []]);
    expect(new Set(results.map((result) => result.order?.orderId)).size).toBe(1);
    expect(await userOrders(user.userId)).toHaveLength(1);
    expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(8);
    expect((await profileOf(user.userId))?.orderCount).toBe(1);
  });

  it('marks only one of them as not replayed even when all arrive in the same millisecond', async () => {
    freezeClock();
    const { results } = await fireDuplicates(10, 1);
    expect(results.map((result) => result.replayed).sort()).toEqual([false, true, true, true, true]);
  });
});

describe('a mixed concurrent load', () => {
  const STARTING_STOCK = [7, 9, 11, 13];
  const products = STARTING_STOCK.map((stock, i) => aProduct({ productId: `mixed-${i}-${suffix()}`, stock }));
  const users = Array.from({ length: 5 }, (_, i) => aUser({ userId: `shopper-${i}-${suffix()}` }));

  interface PlannedOrder {
    userId: string;
    idempotencyKey: string;
    orderId: string;
    items: { productId: string; quantity: number }[];
  }

  /** 5 users x 8 orders of 1-3 lines over the 4 products: far more units than in stock. */
  const planned: PlannedOrder[] = users.flatMap((user, u) =>
    Array.from({ length: 8 }, (_, k) => {
      const idempotencyKey = `mixed-${k}`;
      const lines = 1 + ((u + k) % 3);
      const items = Array.from({ length: lines }, (_, l) => ({
        productId: products[(u + k + l) % products.length]?.productId as string,
        quantity: 1 + ((u * 3 + k + l) % 3),
      }));
      return { userId: user.userId, idempotencyKey, orderId: orderIdFor(user.userId, idempotencyKey), items };
    }),
  );

  const placed: PlaceOrderResult[] = [];
  const changes: { kind: 'cancel' | 'ship' | 'deliver'; orderId: string; result: OrderChangeResult }[] = [];
  let snapshot: Item[];

  beforeAll(async () => {
    await store(server.dynamo.doc, server.tableName, { users, products });
    const place = async (order: PlannedOrder) => {
      const response = await placeOrder({
        userId: order.userId,
        items: order.items,
        idempotencyKey: order.idempotencyKey,
      });
      placed.push(payloadOf(response, 'placeOrder'));
    };
    const change = async (kind: 'cancel' | 'ship' | 'deliver', orderId: string) => {
      const response =
        kind === 'cancel'
          ? await server.gql<{ cancelOrder: OrderChangeResult }>(CANCEL_ORDER, { input: { orderId } })
          : await server.gql<{ updateOrderStatus: OrderChangeResult }>(UPDATE_ORDER_STATUS, {
              input: { orderId, status: kind === 'ship' ? 'SHIPPED' : 'DELIVERED' },
            });
      expect(response.errors).toBeUndefined();
      const result = (response.data as Record<string, OrderChangeResult>)[
        kind === 'cancel' ? 'cancelOrder' : 'updateOrderStatus'
      ];
      changes.push({ kind, orderId, result: result as OrderChangeResult });
    };

    // Round 1: every order, a duplicate of every third one, and status changes racing the
    // placements they refer to (orderIds are derived from userId + idempotencyKey).
    await Promise.all([
      ...planned.map(place),
      ...planned.filter((_, i) => i % 3 === 0).map(place),
      ...planned.filter((_, i) => i % 4 === 1).map((order) => change('cancel', order.orderId)),
      ...planned.filter((_, i) => i % 4 === 2).map((order) => change('ship', order.orderId)),
    ]);
    // Round 2: contested transitions on what was placed (cancel and ship of one order race each
    // other), deliveries racing their shipments, and the orders refused earlier tried again
    // while cancellations return stock.
    const placedIds = new Set(placed.flatMap((result) => (result.order ? [result.order.orderId] : [])));
    const round2 = planned.filter((order) => placedIds.has(order.orderId));
    await Promise.all([
      ...round2
        .filter((_, i) => i % 3 === 0)
        .flatMap((order) => [change('cancel', order.orderId), change('ship', order.orderId)]),
      ...round2
        .filter((_, i) => i % 3 === 1)
        .flatMap((order) => [change('ship', order.orderId), change('deliver', order.orderId)]),
      ...round2.filter((_, i) => i % 3 === 2).map((order) => change('cancel', order.orderId)),
      ...planned.filter((order) => !placedIds.has(order.orderId)).map(place),
      ...planned.filter((_, i) => i % 5 === 0).map(place),
    ]);
    snapshot = await scanTable(server.dynamo.doc, server.tableName);
  });

  // The table is shared with the other races in this file: look at this load's users only.
  const ofType = (entityType: string) =>
    snapshot.filter((item) => item.entityType === entityType && users.some((user) => user.userId === item.userId));
  const details = () => ofType('Order');
  const copies = () => ofType('UserOrder');

  it('placed some orders and refused others, so the load really contended for stock', () => {
    expect(placed.some((result) => result.order !== null)).toBe(true);
    expect(placed.some((result) => result.userErrors.some((error) => error.code === 'INSUFFICIENT_STOCK'))).toBe(true);
    expect(placed.some((result) => result.replayed)).toBe(true);
    expect(changes.some((change) => change.result.order !== null)).toBe(true);
    expect(changes.some((change) => change.result.userErrors.length > 0)).toBe(true);
  });

  it("keeps every user's orderCount equal to the number of their orders", () => {
    for (const user of users) {
      const profile = snapshot.find((item) => item.PK === `USER#${user.userId}` && item.SK === 'PROFILE');
      const count = snapshot.filter(
        (item) => item.PK === `USER#${user.userId}` && String(item.SK).startsWith('ORDER#'),
      ).length;
      expect({ userId: user.userId, orderCount: profile?.orderCount }).toEqual({
        userId: user.userId,
        orderCount: count,
      });
      expect(details().filter((order) => order.userId === user.userId)).toHaveLength(count);
    }
  });

  it('stores every order twice, with one status and the LSI1 key of that status', () => {
    expect(details().length).toBeGreaterThan(0);
    expect(copies()).toHaveLength(details().length);
    for (const order of details()) {
      const orderId = String(order.orderId);
      const copy = copies().find((item) => item.orderId === orderId);
      expect(copy).toMatchObject({
        PK: `USER#${String(order.userId)}`,
        SK: `ORDER#${String(order.placedAt)}#${orderId}`,
        LSI1SK: `STATUS#${String(order.status)}#${String(order.placedAt)}#${orderId}`,
        status: order.status,
        version: order.version,
        items: order.items,
      });
      expect(order).toMatchObject({ PK: `ORDER#${orderId}`, SK: 'DETAILS' });
    }
  });

  it('stores exactly the orders that placeOrder reported, one per idempotency key', () => {
    const reported = new Set(placed.flatMap((result) => (result.order ? [result.order.orderId] : [])));
    expect(new Set(details().map((order) => String(order.orderId)))).toEqual(reported);
  });

  it('keeps every order in the status its last successful change gave it, when that status is final', () => {
    for (const { kind, orderId, result } of changes) {
      if (result.order === null || kind === 'ship') continue;
      const order = details().find((item) => item.orderId === orderId);
      expect({ orderId, status: order?.status }).toEqual({
        orderId,
        status: kind === 'cancel' ? 'CANCELLED' : 'DELIVERED',
      });
    }
  });

  it('never lets two conflicting changes of one order both succeed', () => {
    const won = new Map<string, string[]>();
    for (const { kind, orderId, result } of changes) {
      if (result.order !== null) won.set(orderId, [...(won.get(orderId) ?? []), kind]);
    }
    for (const [orderId, kinds] of won) {
      const legal = [['cancel'], ['ship'], ['ship', 'deliver'], ['deliver', 'ship']];
      expect({ orderId, kinds }).toEqual({ orderId, kinds: expect.toBeOneOf(legal) });
    }
  });

  it('keeps starting stock = final stock + units in orders that are not cancelled, for every product', () => {
    products.forEach((product, i) => {
      const stored = snapshot.find((item) => item.PK === `PRODUCT#${product.productId}`);
      const sold = details()
        .filter((order) => order.status !== 'CANCELLED')
        .flatMap((order) => order.items as { productId: string; quantity: number }[])
        .filter((line) => line.productId === product.productId)
        .reduce((sum, line) => sum + line.quantity, 0);
      expect({ productId: product.productId, stock: Number(stored?.stock) + sold }).toEqual({
        productId: product.productId,
        stock: STARTING_STOCK[i],
      });
      expect(Number(stored?.stock)).toBeGreaterThanOrEqual(0);
    });
  });
});
