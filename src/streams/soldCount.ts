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
 * The lines of many orders share a transaction (soldCountBatch.ts packs them): each line keeps
 * its own conditioned marker, so sharing changes nothing of the above.
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

/** At most 100 actions per transaction, one of them the fence. */
export const MAX_ACTIONS = 100;

/** One TransactWriteItems of soldCount lines (conflict retries within it included): for the stage figures. */
export interface TransactionTiming {
  lines: number;
  actions: number;
  ms: number;
  /** It committed: under a fence, the tenure was current when it did. */
  committed: boolean;
}

export interface SoldCountOutcome {
  /** Lines whose product's soldCount changed now. */
  changed: number;
  /** Lines already in the target state (a redelivery), or cancelled before they were counted. */
  unchanged: number;
  /** Lines whose product no longer exists: skipped, nothing written for them. */
  missingProducts: number;
}

/** An order moving to a sale state: what one stream record asks of soldCount. */
export interface Sale {
  order: { orderId: string; userId: string; items: readonly Pick<OrderLineModel, 'productId' | 'quantity'>[] };
  target: SaleState;
}

/** One line of a sale (its order's lines of one product, merged) on its way to `target`. */
export interface PendingLine {
  /** The sale's position in the list given to applySales. */
  sale: number;
  orderId: string;
  userId: string;
  productId: string;
  quantity: number;
  target: SaleState;
  /** The marker state this attempt's conditions expect; a failed condition tells the real one. */
  expect: 'absent' | 'SOLD';
}

/** The lines of each sale, in order: an order's lines naming one product twice (foreign writers) merged. */
export function linesOf(sales: readonly Sale[]): PendingLine[] {
  return sales.flatMap(({ order, target }, sale) => {
    const quantities = new Map<string, number>();
    for (const line of order.items)
      quantities.set(line.productId, (quantities.get(line.productId) ?? 0) + line.quantity);
    return [...quantities].map(([productId, quantity]) => ({
      sale,
      orderId: order.orderId,
      userId: order.userId,
      productId,
      quantity,
      target,
      expect: target === 'SOLD' ? ('absent' as const) : ('SOLD' as const),
    }));
  });
}

/**
 * Settles one transaction's worth of lines (see soldCountBatch.ts): each attempt writes every
 * pending line's marker, each product's soldCount change summed over its lines, and each
 * buyer record's change, under the fence. A cancelled attempt settles what its reasons say
 * (a marker already there: a redelivery; a product gone) and goes again with the rest. Counts
 * each settled line into `outcomes[line.sale]`. Throws LeaseLostError when fenced off, and an
 * error when the transaction was refused for no line's reason or did not settle.
 */
export async function settleLines(
  doc: DynamoDBDocumentClient,
  tableName: string,
  lines: readonly PendingLine[],
  now: Date,
  fence: Fence | undefined,
  outcomes: SoldCountOutcome[],
  observe?: (attempt: TransactionTiming) => void,
): Promise<void> {
  let pending = [...lines];
  const count = (line: PendingLine, field: keyof SoldCountOutcome) => {
    const outcome = (outcomes[line.sale] ??= { changed: 0, unchanged: 0, missingProducts: 0 });
    outcome[field]++;
  };
  // Every cancelled attempt settles a line or corrects a guess about one marker; a marker
  // changes state at most twice, so a healthy table needs far fewer attempts than this.
  const maxAttempts = 2 * lines.length + 2;
  for (let attempt = 0; attempt < maxAttempts && pending.length > 0; attempt++) {
    const transaction = transactionOf(tableName, pending, now, fence);
    const started = performance.now();
    const result = await transactWrite(doc, transaction);
    observe?.({
      lines: pending.length,
      actions: transaction.names.length,
      ms: performance.now() - started,
      committed: result.committed,
    });
    if (result.committed) {
      for (const line of pending)
        count(line, line.expect === 'absent' && line.target === 'CANCELLED' ? 'unchanged' : 'changed');
      return;
    }
    const cancellation: Cancellation = result.cancellation;
    if (fence && cancellation.failed('fence')) throw new LeaseLostError(fence.tenure);
    if (cancellation.failedNames.length === 0) {
      throw new Error(`soldCount transaction cancelled: ${cancellation.describe()}`);
    }
    pending = pending.flatMap((line) => {
      if (cancellation.failed(productName(line))) {
        count(line, 'missingProducts');
        return [];
      }
      if (!cancellation.failed(markerName(line))) return [line]; // innocent: try again with the others settled
      const next = nextExpectation(cancellation.old(markerName(line)), line.target);
      if (next === 'settled') {
        count(line, 'unchanged');
        return [];
      }
      return [{ ...line, expect: next }];
    });
  }
  if (pending.length > 0) {
    const orders = [...new Set(pending.map((line) => line.orderId))].join(', ');
    throw new Error(`soldCount of order(s) ${orders} did not settle in ${maxAttempts} attempts`);
  }
}

/**
 * The transaction of `lines`: a marker action per line, one action per product (its lines'
 * soldCount changes summed, or a bare existence check when they sum to nothing) and one per
 * buyer record. The lines must share no marker, and a buyer record only between lines that
 * add to it (soldCountBatch.ts packs them so): DynamoDB refuses two actions on one item.
 */
function transactionOf(
  tableName: string,
  lines: readonly PendingLine[],
  now: Date,
  fence: Fence | undefined,
): Transaction {
  const transaction = new Transaction();
  if (fence) transaction.add('fence', fence.condition);
  const deltas = new Map<string, number>();
  const buyers = new Map<string, { line: PendingLine; operation: 'ADD' | 'DELETE'; orderIds: Set<string> }>();
  for (const line of lines) {
    transaction.add(markerName(line), markerAction(tableName, line, now));
    deltas.set(line.productId, (deltas.get(line.productId) ?? 0) + deltaOf(line));
    const operation = buyerOperationOf(line);
    if (!operation) continue;
    const name = buyerName(line);
    const buyer = buyers.get(name);
    if (buyer) buyer.orderIds.add(line.orderId);
    else buyers.set(name, { line, operation, orderIds: new Set([line.orderId]) });
  }
  for (const [productId, delta] of deltas)
    transaction.add(`product:${productId}`, productAction(tableName, productId, delta));
  for (const [name, { line, operation, orderIds }] of buyers) {
    transaction.add(name, {
      Update: {
        TableName: tableName,
        Key: buyerKey(line.productId, line.userId),
        // A set of order ids: adding or removing one twice is the same as once.
        UpdateExpression: `SET entityType = :type ${operation} orderIds :order`,
        ExpressionAttributeValues: { ':type': BUYER_ENTITY_TYPE, ':order': orderIds },
      },
    });
  }
  return transaction;
}

/** The soldCount change a line makes on the edge its marker is expected to take. */
function deltaOf(line: PendingLine): number {
  if (line.target === 'SOLD') return line.quantity;
  return line.expect === 'SOLD' ? -line.quantity : 0;
}

/** The buyer record's change on that edge: counted in, taken out, or (a tombstone) none. */
function buyerOperationOf(line: PendingLine): 'ADD' | 'DELETE' | undefined {
  if (line.target === 'SOLD') return 'ADD';
  return line.expect === 'SOLD' ? 'DELETE' : undefined;
}

const markerName = (line: PendingLine) => `marker:${line.productId}:${line.orderId}`;
const productName = (line: PendingLine) => `product:${line.productId}`;
const buyerName = (line: PendingLine) => `buyer:${line.productId}:${line.userId}`;

/**
 * The names a line's actions go by in a transaction (its marker, its product, its buyer
 * record): what soldCountBatch.ts packs by.
 */
export const namesOf = (line: PendingLine) => ({
  marker: markerName(line),
  product: productName(line),
  buyer: buyerName(line),
});

/** What a failed marker condition says about the marker (its old image came back with the reason). */
function nextExpectation(old: Item | undefined, target: SaleState): PendingLine['expect'] | 'settled' {
  const state = old?.state as SaleState | undefined;
  // Counting: any marker means the order was counted, or cancelled before it was counted.
  if (target === 'SOLD') return 'settled';
  if (state === 'CANCELLED') return 'settled';
  return state === 'SOLD' ? 'SOLD' : 'absent';
}

/** The marker's action: put in the target state if absent, or moved from SOLD to CANCELLED. */
function markerAction(tableName: string, line: PendingLine, now: Date): TransactItem {
  if (line.expect === 'absent') {
    return {
      Put: {
        TableName: tableName,
        Item: {
          ...productSaleKey(line.productId, line.orderId),
          entityType: SALE_MARKER_ENTITY_TYPE,
          productId: line.productId,
          orderId: line.orderId,
          quantity: line.quantity,
          state: line.target,
          updatedAt: now.toISOString(),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
  return {
    Update: {
      TableName: tableName,
      Key: productSaleKey(line.productId, line.orderId),
      UpdateExpression: 'SET #state = :cancelled, updatedAt = :now',
      ConditionExpression: '#state = :sold',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':cancelled': 'CANCELLED', ':sold': 'SOLD', ':now': now.toISOString() },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * The product's action: its soldCount moved by `delta`, or, when its lines move nothing (a
 * tombstone, or a sale and a cancellation that cancel out), a check that it exists: a marker is
 * never written in the partition of a product that does not exist. No version bump and no
 * updatedAt: soldCount is derived data, not an edit of the product, and must not make a
 * client's optimistic-locking update fail.
 */
function productAction(tableName: string, productId: string, delta: number): TransactItem {
  const Key = productKey(productId);
  if (delta === 0)
    return { ConditionCheck: { TableName: tableName, Key, ConditionExpression: 'attribute_exists(PK)' } };
  return {
    Update: {
      TableName: tableName,
      Key,
      UpdateExpression: 'ADD soldCount :delta',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':delta': delta },
    },
  };
}
