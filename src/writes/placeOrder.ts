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
import { orderKey, productKey, userKey } from '../table/keys.js';
import type { OrderLineModel, OrderModel } from '../table/models.js';
import { failedConditions, transactWrite } from './transact.js';
import type { TransactItem } from './transact.js';
import { failed, InputChecker, succeeded, userError } from './userErrors.js';
import type { UserError, WriteResult } from './userErrors.js';
import { checkId, checkInt, LIMITS } from './validate.js';

/** TransactWriteItems takes 100 actions; an order needs 3 besides one per line. */
export const MAX_ORDER_LINES = 97;

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
    check.invalid(['items'], `An order may have at most ${MAX_ORDER_LINES} lines (one DynamoDB transaction)`);
  }
  const seen = new Map<string, number>();
  input.items.forEach((line, index) => {
    const productId = checkId(check, ['items', index, 'productId'], line.productId);
    checkInt(check, ['items', index, 'quantity'], line.quantity, 1, LIMITS.maxQuantity);
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
  return succeeded({ userId, idempotencyKey, lines: input.items.map((line) => ({ ...line })) });
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
  return succeeded({ order: itemToOrder(stored), replayed: true });
}

export async function placeOrder(
  { dynamo, tableName }: DataSources,
  input: PlaceOrderInput,
  now = new Date(),
): Promise<WriteResult<PlacedOrder>> {
  const valid = validate(input);
  if (!valid.ok) return valid;
  const { userId, idempotencyKey, lines } = valid.value;
  const orderId = orderIdFor(userId, idempotencyKey);
  const fingerprint = fingerprintOf(userId, lines);

  const [stored, profile, ...productItems] = await batchGetItems(
    dynamo.doc,
    tableName,
    [orderKey(orderId), userKey(userId), ...lines.map((line) => productKey(line.productId))],
    { consistentRead: true },
  );
  if (stored) return replay(stored, fingerprint);

  const errors: UserError[] = [];
  if (!profile) errors.push(userError('NOT_FOUND', ['userId'], `No user with userId "${userId}"`));
  const orderLines: OrderLineModel[] = [];
  lines.forEach((line, index) => {
    const item = productItems[index];
    if (!item) {
      errors.push(
        userError('NOT_FOUND', ['items', index, 'productId'], `No product with productId "${line.productId}"`),
      );
      return;
    }
    const product = itemToProduct(item);
    if (product.stock < line.quantity) errors.push(insufficientStock(index, product.stock));
    orderLines.push({
      productId: product.productId,
      productName: product.name,
      unitPriceCents: product.priceCents,
      quantity: line.quantity,
    });
  });
  if (errors.length > 0) return failed(...errors);

  const placedAt = now.toISOString();
  const order: OrderModel = {
    kind: 'Order',
    orderId,
    userId,
    status: 'PLACED',
    placedAt,
    updatedAt: placedAt,
    items: orderLines,
    totalCents: orderLines.reduce((sum, line) => sum + line.unitPriceCents * line.quantity, 0),
    version: 1,
  };
  const n = lines.length;
  const outcome = await transactWrite(dynamo.doc, {
    // One token per call, reused by every retry of this very request: DynamoDB applies it at
    // most once (10 minutes). Concurrent twins get their own tokens, so they reach the
    // attribute_not_exists condition and are answered as replays.
    ClientRequestToken: digest(`${orderId}\n${fingerprint}\n${placedAt}\n${randomUUID()}`).slice(0, 36),
    TransactItems: placeOrderActions(tableName, order, idempotencyKey, fingerprint),
  });
  if (outcome.committed) return succeeded({ order, replayed: false });

  const failures = failedConditions(outcome.reasons);
  if (failures.includes(n) || failures.includes(n + 1)) {
    // A concurrent request with the same idempotencyKey committed first: answer as a replay.
    const current = await dynamo.doc.send(
      new GetCommand({ TableName: tableName, Key: orderKey(orderId), ConsistentRead: true }),
    );
    if (current.Item) return replay(current.Item, fingerprint);
  }
  return failed(
    ...failures.flatMap((index): UserError[] => {
      if (index < n) {
        const old = outcome.reasons[index]?.item;
        return old
          ? [insufficientStock(index, Number(old.stock))]
          : [
              userError(
                'NOT_FOUND',
                ['items', index, 'productId'],
                `No product with productId "${lines[index]?.productId}"`,
              ),
            ];
      }
      if (index === n + 2) return [userError('NOT_FOUND', ['userId'], `No user with userId "${userId}"`)];
      return [];
    }),
  );
}

/**
 * The transaction's actions, in the order the cancellation reasons are mapped back by: one
 * stock decrement per line (indices 0..n-1), the details put (n), the user-partition copy (n+1),
 * the profile's orderCount (n+2). Exported so the benchmark's peers write exactly this.
 */
export function placeOrderActions(
  tableName: string,
  order: OrderModel,
  idempotencyKey: string,
  fingerprint: string,
): TransactItem[] {
  return [
    ...order.items.map((line): TransactItem => ({
      Update: {
        TableName: tableName,
        Key: productKey(line.productId),
        UpdateExpression: 'SET stock = stock - :q, version = version + :one, updatedAt = :now',
        ConditionExpression: 'attribute_exists(PK) AND stock >= :q',
        ExpressionAttributeValues: { ':q': line.quantity, ':one': 1, ':now': order.placedAt },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    })),
    {
      Put: {
        TableName: tableName,
        Item: { ...orderToDetailsItem(order), idempotencyKey, requestFingerprint: fingerprint },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    { Put: { TableName: tableName, Item: orderToUserItem(order), ConditionExpression: 'attribute_not_exists(PK)' } },
    {
      Update: {
        TableName: tableName,
        Key: userKey(order.userId),
        UpdateExpression: 'SET orderCount = orderCount + :one',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
  ];
}

const insufficientStock = (index: number, stock: number) =>
  userError('INSUFFICIENT_STOCK', ['items', index, 'quantity'], `Only ${stock} in stock`);
