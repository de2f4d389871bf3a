/**
 * The raw chain's one write (rawOperations.ts), placeOrder: the order, the user and the products
 * read in one BatchGetItem, a replay answered from the stored order, then exactly the server's
 * transaction (src/writes/placeOrder.ts), answered in the GraphQL servers' JSON shape.
 */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { toMoney } from '../src/money.js';
import { itemToOrder, itemToProduct } from '../src/table/codecs.js';
import { itemKeyId, orderKey, productKey, userKey } from '../src/table/keys.js';
import type { OrderModel } from '../src/table/models.js';
import { fingerprintOf, newOrder, orderIdFor, orderLineOf, placeOrderTransaction } from '../src/writes/placeOrder.js';
import { orderBase } from './rawJson.js';
import type { Json } from './rawJson.js';
import type { RawReads } from './rawReads.js';

/** placeOrder on table `table`, reading through `reads`. */
export function rawPlaceOrder(table: string, { batchGet }: RawReads) {
  return async function placeOrder(doc: DynamoDBDocumentClient, variables: Json): Promise<Json> {
    const input = variables.input as {
      userId: string;
      idempotencyKey: string;
      items: { productId: string; quantity: number }[];
    };
    const orderId = orderIdFor(input.userId, input.idempotencyKey);
    const fingerprint = fingerprintOf(input.userId, input.items);
    const found = await batchGet(doc, [
      orderKey(orderId),
      userKey(input.userId),
      ...input.items.map((line) => productKey(line.productId)),
    ]);
    const stored = found.get(itemKeyId(orderKey(orderId)));
    const orderJson = (order: OrderModel) => ({
      ...orderBase(order),
      items: order.items.map((line) => ({
        productId: line.productId,
        productName: line.productName,
        quantity: line.quantity,
        lineTotal: { amount: toMoney(line.unitPriceCents * line.quantity).amount },
      })),
    });
    if (stored) return { placeOrder: { replayed: true, userErrors: [], order: orderJson(itemToOrder(stored)) } };
    if (!found.has(itemKeyId(userKey(input.userId)))) {
      return {
        placeOrder: {
          replayed: false,
          order: null,
          userErrors: [{ code: 'NOT_FOUND', field: ['userId'], message: 'No such user' }],
        },
      };
    }
    const lines = input.items.map((line) => {
      const item = found.get(itemKeyId(productKey(line.productId)));
      if (!item) throw new Error(`no product ${line.productId}`);
      return orderLineOf(itemToProduct(item), line.quantity);
    });
    const order = newOrder(orderId, input.userId, lines, new Date());
    await doc.send(
      new TransactWriteCommand({
        ClientRequestToken: randomUUID(),
        // Exactly the server's transaction (src/writes/placeOrder.ts).
        TransactItems: placeOrderTransaction(table, order, input.idempotencyKey, fingerprint).items,
      }),
    );
    return { placeOrder: { replayed: false, userErrors: [], order: orderJson(order) } };
  };
}
