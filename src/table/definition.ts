/**
 * The table's definition, in one place: created at start-up when missing, the table of the AWS
 * stack (deploy/table.ts), and used by the migrations to add an index an existing table lacks
 * (src/migrations/), so that all three agree. LSI1 must be here from the start: a local
 * secondary index cannot be added to an existing table. GSI2 and the product indexes came
 * later: a table created before them gets them from a migration (UpdateTable).
 */
import type { AttributeDefinition, CreateTableCommandInput, GlobalSecondaryIndex } from '@aws-sdk/client-dynamodb';

export const GSI1 = 'GSI1';
export const GSI2 = 'GSI2';
export const LSI1 = 'LSI1';
/** The catalog's browse indexes (see PRODUCT_INDEXES). */
export const GSI3 = 'GSI3';
export const GSI4 = 'GSI4';
export const GSI5 = 'GSI5';

/** GSI2: shop-wide orders (all, or by status) by placedAt, write-sharded (entities/shards.ts). */
export const GSI2_INDEX: GlobalSecondaryIndex = {
  IndexName: GSI2,
  KeySchema: [
    { AttributeName: 'GSI2PK', KeyType: 'HASH' },
    { AttributeName: 'GSI2SK', KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: 'ALL' },
};
export const GSI2_ATTRIBUTES: AttributeDefinition[] = [
  { AttributeName: 'GSI2PK', AttributeType: 'S' },
  { AttributeName: 'GSI2SK', AttributeType: 'S' },
];

/**
 * The catalog's browse orders beyond GSI1's "a category by name". They share two attributes
 * with GSI1 and each other, so a product carries only two more: `GSI3SK` (its price order)
 * and `GSI4PK` (its shard of the shop-wide listing). Users carry GSI1 keys but neither of
 * these, so they stay out of all three (sparse indexes).
 * - GSI3 (GSI1PK, GSI3SK): a category by price.
 * - GSI4 (GSI4PK, GSI1SK): the whole shop by name, write-sharded.
 * - GSI5 (GSI4PK, GSI3SK): the whole shop by price, write-sharded.
 */
const productIndex = (name: string, partitionKey: string, sortKey: string): GlobalSecondaryIndex => ({
  IndexName: name,
  KeySchema: [
    { AttributeName: partitionKey, KeyType: 'HASH' },
    { AttributeName: sortKey, KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: 'ALL' },
});
export const PRODUCT_INDEXES: readonly GlobalSecondaryIndex[] = [
  productIndex(GSI3, 'GSI1PK', 'GSI3SK'),
  productIndex(GSI4, 'GSI4PK', 'GSI1SK'),
  productIndex(GSI5, 'GSI4PK', 'GSI3SK'),
];
/** What the product indexes add to the attribute definitions (GSI1's are there already). */
export const PRODUCT_INDEX_ATTRIBUTES: AttributeDefinition[] = [
  { AttributeName: 'GSI3SK', AttributeType: 'S' },
  { AttributeName: 'GSI4PK', AttributeType: 'S' },
];

export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: 'PK', AttributeType: 'S' },
      { AttributeName: 'SK', AttributeType: 'S' },
      { AttributeName: 'GSI1PK', AttributeType: 'S' },
      { AttributeName: 'GSI1SK', AttributeType: 'S' },
      { AttributeName: 'LSI1SK', AttributeType: 'S' },
      ...GSI2_ATTRIBUTES,
      ...PRODUCT_INDEX_ATTRIBUTES,
    ],
    KeySchema: [
      { AttributeName: 'PK', KeyType: 'HASH' },
      { AttributeName: 'SK', KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: GSI1,
        KeySchema: [
          { AttributeName: 'GSI1PK', KeyType: 'HASH' },
          { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      GSI2_INDEX,
      ...PRODUCT_INDEXES,
    ],
    LocalSecondaryIndexes: [
      {
        IndexName: LSI1,
        KeySchema: [
          { AttributeName: 'PK', KeyType: 'HASH' },
          { AttributeName: 'LSI1SK', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}
