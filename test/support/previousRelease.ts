/**
 * A table as the release before the migrations left it: no GSI2 or product indexes (GSI3-GSI5)
 * in its definition, order items without GSI2 keys, products without their browse keys,
 * profiles without per-status counts, no category counters, no migration records.
 * Built from today's codecs minus what the migration adds, so the shapes cannot drift apart.
 */
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putItems } from '../../src/db/batchWrite.js';
import { EntityType, orderToDetailsItem, orderToUserItem, productToItem, userToItem } from '../../src/table/codecs.js';
import type { Item } from '../../src/table/codecs.js';
import { GSI2, PRODUCT_INDEXES, PRODUCT_INDEX_ATTRIBUTES, tableDefinition } from '../../src/table/definition.js';
import { emailGuardKey, statusCountAttribute } from '../../src/table/keys.js';
import { ORDER_STATUSES } from '../../src/table/models.js';
import type { OrderModel, ProductModel, UserModel } from '../../src/table/models.js';

const ADDED_ATTRIBUTES = [
  'GSI2PK',
  'GSI2SK',
  ...PRODUCT_INDEX_ATTRIBUTES.map((attribute) => attribute.AttributeName),
  ...ORDER_STATUSES.map(statusCountAttribute),
];
const ADDED_INDEXES = [GSI2, ...PRODUCT_INDEXES.map((index) => index.IndexName)];

export async function createPreviousReleaseTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const definition = tableDefinition(tableName);
  await client.send(
    new CreateTableCommand({
      ...definition,
      AttributeDefinitions: definition.AttributeDefinitions?.filter(
        (a) => !a.AttributeName?.startsWith('GSI2') && !ADDED_ATTRIBUTES.includes(a.AttributeName ?? ''),
      ),
      GlobalSecondaryIndexes: definition.GlobalSecondaryIndexes?.filter(
        (index) => !ADDED_INDEXES.includes(index.IndexName),
      ),
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1 }, { TableName: tableName });
}

const previousShape = (item: Item): Item =>
  Object.fromEntries(Object.entries(item).filter(([name]) => !ADDED_ATTRIBUTES.includes(name)));

export function previousReleaseItems(data: {
  users: UserModel[];
  products: ProductModel[];
  orders: OrderModel[];
}): Item[] {
  return [
    ...data.users.flatMap((user) => [
      userToItem({ ...user, orderCount: data.orders.filter((o) => o.userId === user.userId).length }),
      { ...emailGuardKey(user.email), entityType: EntityType.EmailGuard, userId: user.userId },
    ]),
    ...data.products.map(productToItem),
    ...data.orders.flatMap((order) => [orderToDetailsItem(order), orderToUserItem(order)]),
  ].map(previousShape);
}

export async function storePreviousRelease(
  doc: DynamoDBDocumentClient,
  tableName: string,
  data: { users: UserModel[]; products: ProductModel[]; orders: OrderModel[] },
): Promise<void> {
  await putItems(doc, tableName, previousReleaseItems(data));
}
