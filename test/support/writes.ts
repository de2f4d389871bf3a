/**
 * Helpers for tests of the write API: the mutation documents, typed payloads, and a full-table
 * snapshot to prove that a write which failed changed nothing.
 */
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../../src/table/codecs.js';
import type { ItemKey } from '../../src/table/keys.js';

export interface UserErrorResult {
  code: string;
  field: string[] | null;
  message: string;
}

export interface PlaceOrderResult {
  order: { orderId: string; status: string } | null;
  replayed: boolean;
  userErrors: UserErrorResult[];
}

export interface OrderChangeResult {
  order: { orderId: string; status: string } | null;
  userErrors: UserErrorResult[];
}

export interface CreateUserResult {
  user: { userId: string; email: string } | null;
  userErrors: UserErrorResult[];
}

export const PLACE_ORDER = `mutation PlaceOrder($input: PlaceOrderInput!) {
  placeOrder(input: $input) { order { orderId status } replayed userErrors { code field message } }
}`;

export const CANCEL_ORDER = `mutation CancelOrder($input: CancelOrderInput!) {
  cancelOrder(input: $input) { order { orderId status } userErrors { code field message } }
}`;

export const UPDATE_ORDER_STATUS = `mutation UpdateOrderStatus($input: UpdateOrderStatusInput!) {
  updateOrderStatus(input: $input) { order { orderId status } userErrors { code field message } }
}`;

export const CREATE_USER = `mutation CreateUser($input: CreateUserInput!) {
  createUser(input: $input) { user { userId email } userErrors { code field message } }
}`;

/** Every item of the table (all Scan pages, strongly consistent), sorted by PK then SK. */
export async function scanTable(doc: DynamoDBDocumentClient, tableName: string): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  const keyOf = (item: Item) => `${String(item.PK)}\n${String(item.SK)}`;
  return items.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}

/** One item by key, strongly consistent; undefined when it does not exist. */
export async function getItem(doc: DynamoDBDocumentClient, tableName: string, key: ItemKey): Promise<Item | undefined> {
  const result = await doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return result.Item;
}

/** A product's stock as stored. */
export async function stockOf(doc: DynamoDBDocumentClient, tableName: string, productId: string): Promise<number> {
  const item = await getItem(doc, tableName, { PK: `PRODUCT#${productId}`, SK: 'DETAILS' });
  if (!item) throw new Error(`product ${productId} does not exist`);
  return Number(item.stock);
}
