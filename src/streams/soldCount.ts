/**
 * Each product's `soldCount` (units sold, net of cancellations), kept up to date by the stream
 * processor (src/streams/processor.ts) and stored on the product item; absent means 0.
 *
 * Stream delivery is at least once, and a retry replays a whole suffix of a shard, so every
 * counter change goes through a sale marker `PRODUCT#<productId>/SOLD#<orderId>` written in
 * the SAME transaction as the counter. The marker is a one-way state machine:
 *
 *   (absent) --order counted, soldCount + q--> SOLD --order cancelled, soldCount - q--> CANCELLED
 *   (absent) --cancellation seen before the order was counted, no change--> CANCELLED
 *
 * The counter moves only on the edges that change it, each conditioned on the marker's state,
 * so a replayed record changes nothing, in any order. The same edges put the order into the
 * buyer's record of the product (`PRODUCT#<productId>/BUYER#<userId>`, a set of order ids) and
 * take it out again: whether a user bought a product is then one read (a review's
 * verifiedPurchase), never a look through their orders. Markers are never deleted: a deleted
 * marker would let a replayed INSERT count its order again. A consumer on leases also puts its
 * lease's fence in every such transaction: a holder that lost its lease writes nothing at all.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Transaction, transactWrite } from '../db/transact.js';
import type { Cancellation, TransactItem } from '../db/transact.js';
import type { Item } from '../table/codecs.js';
import { BUYER, buyerKey } from '../table/entities/review.js';
import { productKey, productSaleKey } from '../table/keys.js';
import type { OrderLineModel } from '../table/models.js';
import { LeaseLostError } from './leases.js';
import type { Fence } from './leases.js';

/** Where a (product, order) marker ends up: counted, or cancelled (counted and taken back, or never counted). */
export type SaleState = 'SOLD' | 'CANCELLED';

/** `entityType` of a sale marker (derived bookkeeping, never a GraphQL node). */
export const SALE_MARKER_ENTITY_TYPE = 'ProductSale';
const BUYER_ENTITY_TYPE = BUYER.type;

/** Three actions per line (marker, product, buyer), one for the fence, and at most 100 actions per transaction. */
const LINES_PER_TRANSACTION = 33;

export interface SoldCountOutcome {
  /** Lines whose product's soldCount changed now. */
  changed: number;
  /** Lines already in the target state (a redelivery), or cancelled before they were counted. */
  unchanged: number;
  /** Lines whose product no longer exists: skipped, nothing written for them. */
  missingProducts: number;
}

interface PendingLine {
  productId: string;
  quantity: number;
  /** The marker state this attempt's conditions expect; a failed condition tells the real one. */
  expect: 'absent' | 'SOLD';
}

/**
 * Moves the sale marker of every line of order `orderId` to `target`, changing each product's
 * soldCount in the same transaction where the state machine says so. Lines naming one product
 * twice (foreign writers) are merged: a transaction may touch an item once. Throws for
 * anything but "already applied" and "product gone" (the caller retries the record later).
 */
export async function updateSoldCount(
  doc: DynamoDBDocumentClient,
  tableName: string,
  order: { orderId: string; userId: string; items: readonly Pick<OrderLineModel, 'productId' | 'quantity'>[] },
  target: SaleState,
  now: Date = new Date(),
  fence?: Fence,
): Promise<SoldCountOutcome> {
  const quantities = new Map<string, number>();
  for (const line of order.items) quantities.set(line.productId, (quantities.get(line.productId) ?? 0) + line.quantity);
  const lines: PendingLine[] = [...quantities].map(([productId, quantity]) => ({
    productId,
    quantity,
    expect: target === 'SOLD' ? 'absent' : 'SOLD',
  }));
  const outcome: SoldCountOutcome = { changed: 0, unchanged: 0, missingProducts: 0 };
  for (let start = 0; start < lines.length; start += LINES_PER_TRANSACTION) {
    await settleChunk(
      doc,
      tableName,
      order,
      lines.slice(start, start + LINES_PER_TRANSACTION),
      target,
      now,
      outcome,
      fence,
    );
  }
  return outcome;
}

async function settleChunk(
  doc: DynamoDBDocumentClient,
  tableName: string,
  order: { orderId: string; userId: string },
  chunk: PendingLine[],
  target: SaleState,
  now: Date,
  outcome: SoldCountOutcome,
  fence: Fence | undefined,
): Promise<void> {
  let pending = chunk;
  // Every cancelled attempt settles a line or corrects a guess about one marker; a marker
  // changes state at most twice, so a healthy table needs far fewer attempts than this.
  const maxAttempts = 2 * chunk.length + 2;
  for (let attempt = 0; attempt < maxAttempts && pending.length > 0; attempt++) {
    const transaction = new Transaction();
    if (fence) transaction.add('fence', fence.condition);
    for (const line of pending) {
      const [markerAction, productAction, buyerAction] = lineActions(tableName, order, line, target, now);
      transaction.add(markerName(line), markerAction).add(productName(line), productAction);
      if (buyerAction) transaction.add(`buyer:${line.productId}`, buyerAction);
    }
    const result = await transactWrite(doc, transaction);
    if (result.committed) {
      for (const line of pending) {
        if (line.expect === 'absent' && target === 'CANCELLED') outcome.unchanged++;
        else outcome.changed++;
      }
      return;
    }
    const cancellation: Cancellation = result.cancellation;
    if (fence && cancellation.failed('fence')) throw new LeaseLostError(fence.tenure);
    if (cancellation.failedNames.length === 0) {
      throw new Error(`soldCount transaction cancelled: ${cancellation.describe()}`);
    }
    pending = pending.flatMap((line) => {
      if (cancellation.failed(productName(line))) {
        outcome.missingProducts++;
        return [];
      }
      if (!cancellation.failed(markerName(line))) return [line]; // innocent: try again with the others settled
      const next = nextExpectation(cancellation.old(markerName(line)), target);
      if (next === 'settled') {
        outcome.unchanged++;
        return [];
      }
      return [{ ...line, expect: next }];
    });
  }
  if (pending.length > 0) {
    throw new Error(`soldCount of order ${order.orderId} did not settle in ${maxAttempts} attempts`);
  }
}

const markerName = (line: PendingLine) => `marker:${line.productId}`;
const productName = (line: PendingLine) => `product:${line.productId}`;

/** What a failed marker condition says about the marker (its old image came back with the reason). */
function nextExpectation(old: Item | undefined, target: SaleState): PendingLine['expect'] | 'settled' {
  const state = old?.state as SaleState | undefined;
  // Counting: any marker means the order was counted, or cancelled before it was counted.
  if (target === 'SOLD') return 'settled';
  if (state === 'CANCELLED') return 'settled';
  return state === 'SOLD' ? 'SOLD' : 'absent';
}

/** The marker action, the product action and (on the edges that move it) the buyer record's action of one line. */
function lineActions(
  tableName: string,
  { orderId, userId }: { orderId: string; userId: string },
  line: PendingLine,
  target: SaleState,
  now: Date,
): [TransactItem, TransactItem, TransactItem?] {
  const product = productKey(line.productId);
  // A set of order ids: adding or removing one twice is the same as once.
  const buyer = (operation: 'ADD' | 'DELETE'): TransactItem => ({
    Update: {
      TableName: tableName,
      Key: buyerKey(line.productId, userId),
      UpdateExpression: `SET entityType = :type ${operation} orderIds :order`,
      ExpressionAttributeValues: { ':type': BUYER_ENTITY_TYPE, ':order': new Set([orderId]) },
    },
  });
  const marker = (state: SaleState) => ({
    ...productSaleKey(line.productId, orderId),
    entityType: SALE_MARKER_ENTITY_TYPE,
    productId: line.productId,
    orderId,
    quantity: line.quantity,
    state,
    updatedAt: now.toISOString(),
  });
  // No version bump and no updatedAt: soldCount is derived data, not an edit of the product,
  // and must not make a client's optimistic-locking update fail.
  const addSold = (delta: number): TransactItem => ({
    Update: {
      TableName: tableName,
      Key: product,
      UpdateExpression: 'ADD soldCount :delta',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':delta': delta },
    },
  });
  if (line.expect === 'absent') {
    const put: TransactItem = {
      Put: {
        TableName: tableName,
        Item: marker(target),
        ConditionExpression: 'attribute_not_exists(PK)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
    if (target === 'SOLD') return [put, addSold(line.quantity), buyer('ADD')];
    // A tombstone only, so that a late INSERT of this order is not counted; never in the
    // partition of a product that does not exist.
    return [
      put,
      { ConditionCheck: { TableName: tableName, Key: product, ConditionExpression: 'attribute_exists(PK)' } },
    ];
  }
  return [
    {
      Update: {
        TableName: tableName,
        Key: productSaleKey(line.productId, orderId),
        UpdateExpression: 'SET #state = :cancelled, updatedAt = :now',
        ConditionExpression: '#state = :sold',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':cancelled': 'CANCELLED', ':sold': 'SOLD', ':now': now.toISOString() },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    addSold(-line.quantity),
    buyer('DELETE'),
  ];
}
