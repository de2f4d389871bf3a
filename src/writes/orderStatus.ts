/**
 * cancelOrder and updateOrderStatus. An order lives in two items (its details and the copy in
 * its user's partition): both change in one transaction, each conditioned on the status read,
 * so two concurrent changes cannot both win. The same transaction moves the user's
 * per-status counts and the order's status view in GSI2; a cancellation also returns the stock.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DataSources } from '../db/loaders.js';
import { itemToOrder } from '../table/codecs.js';
import {
  orderKey,
  orderShard,
  productKey,
  shopOrdersGSI2PK,
  statusCountAttribute,
  userKey,
  userOrderLSI1SK,
  userOrderSK,
  userPK,
} from '../table/keys.js';
import type { OrderModel, OrderStatus } from '../table/models.js';
import { traceparentFor } from '../telemetry/requestTrace.js';
import { Transaction, transactWrite } from '../db/transact.js';
import type { TransactItem } from '../db/transact.js';
import { failed, InputChecker, succeeded, userError } from './userErrors.js';
import type { WriteResult } from './userErrors.js';
import { checkId } from './validate.js';

/** The lifecycle: PLACED -> SHIPPED -> DELIVERED, PLACED -> CANCELLED. */
export const TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  PLACED: ['SHIPPED', 'CANCELLED'],
  SHIPPED: ['DELIVERED'],
  DELIVERED: [],
  CANCELLED: [],
};

/** Decides whether the caller may change this order; a refusal reads as NOT_FOUND (no leak). */
export type OrderGuard = (order: OrderModel) => boolean;
const anyone: OrderGuard = () => true;

export const cancelOrder = (
  data: DataSources,
  input: { orderId: string },
  guard: OrderGuard = anyone,
  now = new Date(),
) => changeOrderStatus(data, input.orderId, 'CANCELLED', ['orderId'], guard, now);

export const updateOrderStatus = (
  data: DataSources,
  input: { orderId: string; status: OrderStatus },
  guard: OrderGuard = anyone,
  now = new Date(),
) => changeOrderStatus(data, input.orderId, input.status, ['status'], guard, now);

async function changeOrderStatus(
  { dynamo, tableName }: DataSources,
  rawOrderId: string,
  to: OrderStatus,
  statusField: string[],
  guard: OrderGuard,
  now: Date,
): Promise<WriteResult<OrderModel>> {
  const check = new InputChecker();
  const orderId = checkId(check, 'orderId', rawOrderId);
  if (orderId === undefined) return failed(...check.errors);

  const read = await dynamo.doc.send(
    new GetCommand({ TableName: tableName, Key: orderKey(orderId), ConsistentRead: true }),
  );
  const before = read.Item ? itemToOrder(read.Item) : undefined;
  if (!before || !guard(before))
    return failed(userError('NOT_FOUND', ['orderId'], `No order with orderId "${orderId}"`));
  const refuse = (status: OrderStatus) =>
    failed<OrderModel>(userError('INVALID_STATUS', statusField, `The order is ${status}; it cannot become ${to}`));
  if (!TRANSITIONS[before.status].includes(to)) return refuse(before.status);

  const after: OrderModel = { ...before, status: to, updatedAt: now.toISOString(), version: before.version + 1 };
  const values = { ':from': before.status, ':to': to, ':now': after.updatedAt, ':one': 1 };
  const statusUpdate = (key: { PK: string; SK: string }, extraSet = '', extraValues = {}): TransactItem => ({
    Update: {
      TableName: tableName,
      Key: key,
      UpdateExpression: `SET #status = :to, updatedAt = :now, version = version + :one${extraSet}`,
      ConditionExpression: '#status = :from',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ...values, ...extraValues },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  });
  // The write's trace, for the stream processing of this change (telemetry/); only while traced.
  const traceparent = traceparentFor(dynamo.doc);
  const transaction = new Transaction()
    .add(
      'details',
      traceparent
        ? statusUpdate(orderKey(orderId), ', traceparent = :traceparent', { ':traceparent': traceparent })
        : statusUpdate(orderKey(orderId)),
    )
    .add(
      'userCopy',
      statusUpdate(
        { PK: userPK(before.userId), SK: userOrderSK(before.placedAt, orderId) },
        ', LSI1SK = :lsi1sk, GSI2PK = :gsi2pk',
        // The status index keys move with the status: the user's view (LSI1, access pattern 8)
        // and the shop's (GSI2's by-status view, 9).
        {
          ':lsi1sk': userOrderLSI1SK(to, before.placedAt, orderId),
          ':gsi2pk': shopOrdersGSI2PK(to, orderShard(orderId)),
        },
      ),
    );
  // The user's per-status counts move with it (if_not_exists: see placeOrder).
  transaction.add('statusCounts', {
    Update: {
      TableName: tableName,
      Key: userKey(before.userId),
      UpdateExpression: 'SET #from = if_not_exists(#from, :zero) - :one, #to = if_not_exists(#to, :zero) + :one',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#from': statusCountAttribute(before.status), '#to': statusCountAttribute(to) },
      ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
    },
  });
  if (to === 'CANCELLED') {
    before.items.forEach((line, index) =>
      transaction.add(`restock:${index}`, {
        Update: {
          TableName: tableName,
          Key: productKey(line.productId),
          UpdateExpression: 'SET stock = stock + :q, version = version + :one, updatedAt = :now',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':q': line.quantity, ':one': 1, ':now': after.updatedAt },
        },
      }),
    );
  }
  const outcome = await transactWrite(dynamo.doc, transaction);
  if (outcome.committed) return succeeded(after, transaction.touched);

  // Whether someone else changed the status between our read and our write decides the
  // answer, whatever else failed; DynamoDB need not report every failed condition, so the
  // order is read again rather than judged from the reasons.
  const reread = await dynamo.doc.send(
    new GetCommand({ TableName: tableName, Key: orderKey(orderId), ConsistentRead: true }),
  );
  const current = reread.Item ? itemToOrder(reread.Item).status : undefined;
  if (current !== before.status) {
    return current === undefined
      ? failed(userError('NOT_FOUND', ['orderId'], `No order with orderId "${orderId}"`))
      : refuse(current);
  }
  return failed(userError('NOT_FOUND', null, 'A product of this order no longer exists; the order was not changed'));
}
