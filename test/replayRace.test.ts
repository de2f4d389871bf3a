/**
 * "This already happened" must win over every other refusal. A transaction cancelled by
 * several conditions at once reports them in CancellationReasons, but which of them come back
 * as ConditionalCheckFailed (and which as None) depends on the order DynamoDB evaluates them
 * in. So a retry of the order that took the last units, or of a status change, must be
 * answered from a consistent read of what is stored, not from the reasons alone.
 *
 * The interleavings are forced, not hoped for, by a middleware on the server's client:
 * - `transaction`: it holds the first TransactWriteItems until the second has committed, so
 *   both requests have read the table before either writes;
 * - `firstReasonOnly`: the same, and the held transaction's cancellation then reports only its
 *   first failed condition (the others as None), as DynamoDB may when it stops evaluating;
 * - `tornRead`: it splits the first BatchGetItem, reading the order's key before the second
 *   request commits and the rest after, as DynamoDB may (a BatchGetItem is no snapshot).
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { aProduct, aUser, anOrder, store } from './support/factories.js';
import { startTestServer } from './support/harness.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';
import { CANCEL_ORDER, PLACE_ORDER, stockOf, UPDATE_ORDER_STATUS } from './support/writes.js';
import type { OrderChangeResult, PlaceOrderResult } from './support/writes.js';

/** Holds the first TransactWriteItems of a pair until the second one has been answered. */
type Mode = 'transaction' | 'firstReasonOnly' | 'tornRead';

const gate = {
  mode: 'transaction' as Mode,
  armed: false,
  held: false,
  onHeld: () => {},
  release: () => {},
  /** Resolves when the first transaction is being held. */
  firstHeld: Promise.resolve(),
  secondAnswered: Promise.resolve(),
  arm(mode: Mode = 'transaction') {
    this.mode = mode;
    this.armed = true;
    this.held = false;
    this.firstHeld = new Promise<void>((resolve) => {
      this.onHeld = resolve;
    });
    this.secondAnswered = new Promise<void>((resolve) => {
      this.release = resolve;
    });
  },
};

interface BatchGetArgs {
  RequestItems: Record<string, { Keys: { PK: unknown }[] }>;
}
interface BatchGetOutput {
  Responses?: Record<string, unknown[]>;
}
/** The partition key of a key, marshalled or not (the document client's middleware may run either side). */
const partitionOf = (key: { PK: unknown }) =>
  typeof key.PK === 'string' ? key.PK : String((key.PK as { S?: string }).S);

function holdFirstTransaction(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (gate.armed && gate.mode === 'tornRead' && !gate.held && context.commandName === 'BatchGetItemCommand') {
        gate.held = true;
        const input = args.input as BatchGetArgs;
        const split = (orders: boolean) => ({
          ...args,
          input: {
            ...input,
            RequestItems: Object.fromEntries(
              Object.entries(input.RequestItems).map(([table, request]) => [
                table,
                { ...request, Keys: request.Keys.filter((key) => partitionOf(key).startsWith('ORDER#') === orders) },
              ]),
            ),
          },
        });
        const early = await next(split(true));
        gate.onHeld();
        await gate.secondAnswered;
        const late = await next(split(false));
        const responses = { ...(early.output as BatchGetOutput).Responses };
        for (const [table, items] of Object.entries((late.output as BatchGetOutput).Responses ?? {})) {
          responses[table] = [...(responses[table] ?? []), ...items];
        }
        return { ...late, output: { ...(late.output as object), Responses: responses } } as typeof late;
      }
      if (!gate.armed || context.commandName !== 'TransactWriteItemsCommand') return next(args);
      if (gate.mode !== 'tornRead' && !gate.held) {
        gate.held = true;
        gate.onHeld();
        await gate.secondAnswered;
        try {
          return await next(args);
        } catch (error) {
          if (gate.mode === 'firstReasonOnly' && error instanceof TransactionCanceledException) {
            let reported = false;
            error.CancellationReasons = error.CancellationReasons?.map((reason) => {
              if (reason.Code !== 'ConditionalCheckFailed') return reason;
              if (reported) return { Code: 'None' };
              reported = true;
              return reason;
            });
          }
          throw error;
        }
      }
      gate.armed = false;
      try {
        return await next(args);
      } finally {
        gate.release();
      }
    },
    { step: 'initialize', name: 'testHoldFirstTransaction' },
  );
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ configureClient: holdFirstTransaction });
});
afterAll(() => server.stop());
beforeEach(() => {
  gate.armed = false;
});

function payload<T>(response: GraphQLResponse<Record<string, T>>, field: string): T {
  expect(response.errors).toBeUndefined();
  return response.data?.[field] as T;
}

/**
 * Sends `first`, and once its transaction is held (it has read the table by then), `second`;
 * the first is let through when the second has been answered.
 */
async function race<A, B>(
  first: () => Promise<GraphQLResponse<A>>,
  second: () => Promise<GraphQLResponse<B>>,
  mode: Mode = 'transaction',
): Promise<[GraphQLResponse<A>, GraphQLResponse<B>]> {
  gate.arm(mode);
  const held = first();
  await gate.firstHeld;
  return Promise.all([held, second()]);
}

/** The same request twice, raced as above. */
async function racePair<T>(
  send: () => Promise<GraphQLResponse<Record<string, T>>>,
  field: string,
  mode: Mode = 'transaction',
): Promise<T[]> {
  const responses = await race(send, send, mode);
  return responses.map((response) => payload(response, field));
}

/** Rounds per interleaving: the code before this fix failed every round of two of them. */
const ROUNDS = 4;

describe('a placeOrder retried while its first attempt takes the last units', () => {
  const modes: Mode[] = ['transaction', 'firstReasonOnly', 'tornRead'];
  it.each(Array.from({ length: 3 * ROUNDS }, (_, round) => [modes[round % 3] as Mode, round] as const))(
    'is answered as a replay of the stored order (%s, round %i)',
    async (mode) => {
      const user = aUser();
      const product = aProduct({ stock: 2 });
      await store(server.dynamo.doc, server.tableName, { users: [user], products: [product] });
      const input = {
        userId: user.userId,
        items: [{ productId: product.productId, quantity: 2 }],
        idempotencyKey: `race-${product.productId}`,
      };
      const results = await racePair(
        () => server.gql<{ placeOrder: PlaceOrderResult }>(PLACE_ORDER, { input }),
        'placeOrder',
        mode,
      );
      expect(results.map((result) => result.userErrors)).toEqual([[], []]);
      expect(results.map((result) => result.replayed).sort()).toEqual([false, true]);
      expect(new Set(results.map((result) => result.order?.orderId)).size).toBe(1);
      expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(0);
    },
  );

  it('is still IDEMPOTENCY_KEY_REUSED when the retry asks for other lines', async () => {
    const user = aUser();
    const product = aProduct({ stock: 2 });
    await store(server.dynamo.doc, server.tableName, { users: [user], products: [product] });
    const idempotencyKey = `reuse-${product.productId}`;
    const send = (quantity: number) =>
      server.gql<{ placeOrder: PlaceOrderResult }>(PLACE_ORDER, {
        input: { userId: user.userId, items: [{ productId: product.productId, quantity }], idempotencyKey },
      });
    // The held request asks for both units; the other one takes one, so the held one's stock
    // condition fails too, and the stored record must still decide the answer.
    const [held, other] = await race(
      () => send(2),
      () => send(1),
    );
    const codes = [held, other].map((response) =>
      payload(response, 'placeOrder').userErrors.map((error) => error.code),
    );
    expect(codes).toEqual([['IDEMPOTENCY_KEY_REUSED'], []]);
    expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(1);
  });
});

describe('a status change raced by the same change', () => {
  it.each(Array.from({ length: ROUNDS }, (_, round) => [round]))(
    'tells the loser the order already has that status (round %i)',
    async () => {
      const user = aUser();
      const product = aProduct({ stock: 5 });
      const order = anOrder(user, [product]);
      await store(server.dynamo.doc, server.tableName, { users: [user], products: [product], orders: [order] });
      const results = await racePair(
        () => server.gql<{ cancelOrder: OrderChangeResult }>(CANCEL_ORDER, { input: { orderId: order.orderId } }),
        'cancelOrder',
      );
      const outcomes = results.map((result) => result.userErrors.map((error) => [error.code, error.message]));
      expect(outcomes).toEqual([[['INVALID_STATUS', 'The order is CANCELLED; it cannot become CANCELLED']], []]);
      // Restocked once, not twice.
      const quantity = order.items[0]?.quantity ?? 0;
      expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(5 + quantity);
    },
  );

  it('names the status that won when a shipment and a cancellation race', async () => {
    const user = aUser();
    const product = aProduct({ stock: 5 });
    const order = anOrder(user, [product]);
    await store(server.dynamo.doc, server.tableName, { users: [user], products: [product], orders: [order] });
    const [cancel, ship] = await race(
      () => server.gql<{ cancelOrder: OrderChangeResult }>(CANCEL_ORDER, { input: { orderId: order.orderId } }),
      () =>
        server.gql<{ updateOrderStatus: OrderChangeResult }>(UPDATE_ORDER_STATUS, {
          input: { orderId: order.orderId, status: 'SHIPPED' },
        }),
    );
    expect(payload(ship, 'updateOrderStatus').userErrors).toEqual([]);
    expect(payload(cancel, 'cancelOrder').userErrors.map((error) => error.message)).toEqual([
      'The order is SHIPPED; it cannot become CANCELLED',
    ]);
    expect(await stockOf(server.dynamo.doc, server.tableName, product.productId)).toBe(5);
  });
});
