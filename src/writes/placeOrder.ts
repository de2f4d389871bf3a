/**
 * placeOrder: one read, one transaction.
 *
 * The read is one strongly consistent BatchGetItem of the would-be order (its id is derived
 * from userId + idempotencyKey), the user's profile and every product: it finds a replay,
 * a missing user or product, and the prices and names to record, in one round trip.
 *
 * The transaction then holds, in this order: a conditional stock decrement per line
 * (`stock >= :q`), the order details put (`attribute_not_exists`: this item is also the
 * idempotency record, with a fingerprint of the request), the copy in the user's partition,
 * and `orderCount + 1` on a profile that must exist. Nothing is ever half-written, oversold
 * or placed twice for one idempotencyKey, whatever runs concurrently.
 */
import { createHash, randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetItems } from '../db/batchGet.js';
import type { DataSources } from '../db/loaders.js';
import { itemToOrder, itemToProduct, orderToDetailsItem, orderToUserItem } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { orderKey, productKey, statusCountAttribute, userKey } from '../table/keys.js';
import { INPUT_LIMITS, MAX_ORDER_LINES } from '../table/limits.js';
import type { OrderLineModel, OrderModel, ProductModel } from '../table/models.js';
import { asPromise, settle as settleContinuation } from '../db/continuation.js';
import type { Continuation } from '../db/continuation.js';
import { Transaction, TransactionConflictError, transactWriteThen } from '../db/transact.js';
import type { Cancellation } from '../db/transact.js';
import { failed, InputChecker, succeeded, userError } from './userErrors.js';
import type { UserError, WriteResult } from './userErrors.js';
import { checkId, checkInt } from './validate.js';
import { traceparentFor } from '../telemetry/requestTrace.js';

export interface PlaceOrderInput {
  userId: string;
  items: readonly { productId: string; quantity: number }[];
  idempotencyKey: string;
}

export interface PlacedOrder {
  order: OrderModel;
  /** True when the idempotencyKey had placed this order before and nothing was written now. */
  replayed: boolean;
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/** The order id for a user's idempotency key: the same key always names the same order. */
export const orderIdFor = (userId: string, idempotencyKey: string): string =>
  `o${digest(`${userId}\n${idempotencyKey}`).slice(0, 22)}`;

/** What makes two placeOrder requests "the same order": the user and the lines, in any order. */
export const fingerprintOf = (userId: string, lines: readonly { productId: string; quantity: number }[]): string =>
  digest(JSON.stringify([userId, [...lines].map((line) => [line.productId, line.quantity]).sort()]));

/** An order line as placed: the product's name and price now, and the quantity asked for. */
export const orderLineOf = (product: ProductModel, quantity: number): OrderLineModel => ({
  productId: product.productId,
  productName: product.name,
  unitPriceCents: product.priceCents,
  quantity,
});

/** The order placeOrder writes: PLACED at `now`, version 1, its total summed from its lines. */
export function newOrder(orderId: string, userId: string, lines: OrderLineModel[], now: Date): OrderModel {
  const placedAt = now.toISOString();
  return {
    kind: 'Order',
    orderId,
    userId,
    status: 'PLACED',
    placedAt,
    updatedAt: placedAt,
    items: lines,
    totalCents: lines.reduce((sum, line) => sum + line.unitPriceCents * line.quantity, 0),
    version: 1,
  };
}

interface ValidInput {
  userId: string;
  idempotencyKey: string;
  lines: { productId: string; quantity: number }[];
}

function validate(input: PlaceOrderInput): WriteResult<ValidInput> {
  const check = new InputChecker();
  const userId = checkId(check, ['userId'], input.userId);
  const idempotencyKey = checkId(check, ['idempotencyKey'], input.idempotencyKey);
  if (input.items.length === 0) check.invalid(['items'], 'An order needs at least one line');
  if (input.items.length > MAX_ORDER_LINES) {
    // The lines are not looked at: checking each of thousands would answer with an error per line.
    check.invalid(['items'], `An order may have at most ${MAX_ORDER_LINES} lines (one DynamoDB transaction)`);
    return failed(...check.errors);
  }
  const seen = new Map<string, number>();
  input.items.forEach((line, index) => {
    const productId = checkId(check, ['items', index, 'productId'], line.productId);
    checkInt(check, ['items', index, 'quantity'], line.quantity, 1, INPUT_LIMITS.maxQuantity);
    if (productId === undefined) return;
    const first = seen.get(productId);
    // Refused rather than merged: a transaction may touch an item once, and merging would
    // make error paths point at lines the client did not send.
    if (first !== undefined) {
      check.invalid(
        ['items', index, 'productId'],
        `Product "${productId}" is already in line ${first}; order it in one line`,
      );
    } else {
      seen.set(productId, index);
    }
  });
  if (!check.ok || userId === undefined || idempotencyKey === undefined) return failed(...check.errors);
  return succeeded({ userId, idempotencyKey, lines: input.items.map((line) => ({ ...line })) }, []);
}

function replay(stored: Item, fingerprint: string): WriteResult<PlacedOrder> {
  if (stored.requestFingerprint !== fingerprint) {
    return failed(
      userError(
        'IDEMPOTENCY_KEY_REUSED',
        ['idempotencyKey'],
        'This idempotencyKey already placed a different order; use a new key for a new order',
      ),
    );
  }
  return succeeded({ order: itemToOrder(stored), replayed: true }, []);
}

export function placeOrder(
  data: DataSources,
  input: PlaceOrderInput,
  now = new Date(),
): Promise<WriteResult<PlacedOrder>> {
  return Promise.resolve(placeOrderThen(data, input, now, asPromise()));
}

/**
 * `placeOrder` handing its result (or its failure) to `then` within its last request's own
 * `then` (src/db/continuation.ts): one promise per DynamoDB request, whatever the caller does next
 * (the planned executor runs a mutation's write so).
 */
export function placeOrderThen<R>(
  data: DataSources,
  input: PlaceOrderInput,
  now: Date,
  then: Continuation<WriteResult<PlacedOrder>, R>,
): R | Promise<R> {
  const valid = validate(input);
  if (!valid.ok) return then.done(valid);
  const { dynamo, tableName } = data;
  const { userId, idempotencyKey, lines } = valid.value;
  const orderId = orderIdFor(userId, idempotencyKey);
  const fingerprint = fingerprintOf(userId, lines);

  const read = (items: (Item | null)[]): R | Promise<R> => {
    const [stored, profile, ...productItems] = items;
    if (stored) return then.done(replay(stored, fingerprint));

    const errors: UserError[] = [];
    if (!profile) errors.push(userError('NOT_FOUND', ['userId'], `No user with userId "${userId}"`));
    const orderLines: OrderLineModel[] = [];
    lines.forEach((line, index) => {
      const item = productItems[index];
      if (!item) {
        errors.push(productNotFound(index, line.productId));
        return;
      }
      const product = itemToProduct(item);
      if (product.stock < line.quantity) errors.push(insufficientStock(index, product.stock));
      orderLines.push(orderLineOf(product, line.quantity));
    });
    // BatchGetItem reads its keys one by one, not as a snapshot: a twin request that commits
    // in between can leave this read with the stock already taken and the order not yet there.
    const stockTaken = errors.some((error) => error.code === 'INSUFFICIENT_STOCK');
    if (errors.length > 0)
      return stockTaken ? settle(data, orderId, fingerprint, () => errors, then) : then.done(failed(...errors));

    const order = newOrder(orderId, userId, orderLines, now);
    const transaction = placeOrderTransaction(
      tableName,
      order,
      idempotencyKey,
      fingerprint,
      traceparentFor(dynamo.doc),
    );
    // A promise of a promise is the promise of its value.
    return transactWriteThen<R | Promise<R>>(
      dynamo.doc,
      transaction,
      {
        // One token per call (a random UUID: 36 characters, DynamoDB's limit), reused by every
        // retry of this very request: DynamoDB applies it at most once (10 minutes). Concurrent
        // twins get their own tokens, so they reach the attribute_not_exists condition and are
        // answered as replays.
        clientRequestToken: randomUUID(),
      },
      {
        done: (outcome) =>
          guarded(then, () =>
            outcome.committed
              ? then.done(succeeded({ order, replayed: false }, transaction.touched))
              : settle(data, orderId, fingerprint, () => cancellationErrors(outcome.cancellation, lines, userId), then),
          ),
        failed: then.failed,
      },
    ) as Promise<R>;
  };
  return batchGetItems<R | Promise<R>>(
    dynamo.doc,
    tableName,
    [orderKey(orderId), userKey(userId), ...lines.map((line) => productKey(line.productId))],
    { consistentRead: true },
    { done: (items) => guarded(then, () => read(items)), failed: then.failed },
  ) as Promise<R>;
}

/** `next()`, or `then.failed` with what it threw: a continuation's step never lets a throw escape its `then`. */
function guarded<T, R>(then: Continuation<T, R>, next: () => R | Promise<R>): R | Promise<R> {
  try {
    return next();
  } catch (error) {
    return then.failed(error);
  }
}

/**
 * The answer to a placeOrder that did not commit. The idempotency record may exist by now (a
 * twin committed first), and it decides the answer whatever else failed: DynamoDB need not
 * report every failed condition of a cancelled transaction, so the record is read, strongly
 * consistent, instead of trusting the reasons. Only without a record are `errors()` the answer.
 */
function settle<R>(
  { dynamo, tableName }: DataSources,
  orderId: string,
  fingerprint: string,
  errors: () => UserError[],
  then: Continuation<WriteResult<PlacedOrder>, R>,
): Promise<R> {
  return dynamo.doc
    .send(new GetCommand({ TableName: tableName, Key: orderKey(orderId), ConsistentRead: true }))
    .then(
      (current) =>
        settleContinuation(then, () => (current.Item ? replay(current.Item, fingerprint) : failed(...errors()))),
      then.failed,
    );
}

/** The userErrors a cancellation names, once a twin's order has been ruled out. */
function cancellationErrors(
  cancellation: Cancellation,
  lines: readonly { productId: string }[],
  userId: string,
): UserError[] {
  const errors = lines.flatMap((line, index): UserError[] => {
    if (!cancellation.failed(stockAction(index))) return [];
    const old = cancellation.old(stockAction(index));
    return [old ? insufficientStock(index, Number(old.stock)) : productNotFound(index, line.productId)];
  });
  if (cancellation.failed('orderCount'))
    errors.push(userError('NOT_FOUND', ['userId'], `No user with userId "${userId}"`));
  // Only the order's own puts failed, yet no order is stored: it was written and removed in
  // between (a reseed). Nothing changed; the client may retry.
  if (errors.length === 0) throw new TransactionConflictError(1);
  return errors;
}

const stockAction = (line: number) => `stock:${line}`;

/**
 * The transaction: a stock decrement per line (`stock:<line>`), the details put that is also
 * the idempotency record (`details`), the copy in the user's partition (`userCopy`), the
 * profile's orderCount and PLACED count (`orderCount`); both order items carry their GSI2 keys
 * (src/table/entities/order.ts), so the order shows shop-wide. Exported so the benchmark's peers write exactly this.
 */
export function placeOrderTransaction(
  tableName: string,
  order: OrderModel,
  idempotencyKey: string,
  fingerprint: string,
  traceparent?: string,
): Transaction {
  const transaction = new Transaction();
  order.items.forEach((line, index) =>
    transaction.add(stockAction(index), {
      Update: {
        TableName: tableName,
        Key: productKey(line.productId),
        UpdateExpression: 'SET stock = stock - :q, version = version + :one, updatedAt = :now',
        ConditionExpression: 'attribute_exists(PK) AND stock >= :q',
        ExpressionAttributeValues: { ':q': line.quantity, ':one': 1, ':now': order.placedAt },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    }),
  );
  return transaction
    .add('details', {
      Put: {
        TableName: tableName,
        // The write's trace, for the stream processing of this item (telemetry/); only while traced.
        Item: {
          ...orderToDetailsItem(order),
          idempotencyKey,
          requestFingerprint: fingerprint,
          ...(traceparent ? { traceparent } : {}),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    })
    .add('userCopy', {
      Put: { TableName: tableName, Item: orderToUserItem(order), ConditionExpression: 'attribute_not_exists(PK)' },
    })
    .add('orderCount', {
      Update: {
        TableName: tableName,
        Key: userKey(order.userId),
        // The per-status count too (O(1) totalCount); if_not_exists: a profile the counters'
        // migration has not reached yet gets the attribute, and the migration recounts it.
        UpdateExpression: 'SET orderCount = orderCount + :one, #placed = if_not_exists(#placed, :zero) + :one',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#placed': statusCountAttribute('PLACED') },
        ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
      },
    });
}

const insufficientStock = (index: number, stock: number) =>
  userError('INSUFFICIENT_STOCK', ['items', index, 'quantity'], `Only ${stock} in stock`);

const productNotFound = (index: number, productId: string) =>
  userError('NOT_FOUND', ['items', index, 'productId'], `No product with productId "${productId}"`);
