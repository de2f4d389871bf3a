/**
 * The table's definition, in one place: created at start-up when missing, the table of the AWS
 * stack (deploy/table.ts), and used by the migrations to add an index an existing table lacks
 * (src/migrations/), so that all three agree. LSI1 must be here from the start: a local
 * secondary index cannot be added to an existing table. GSI2 came later: a table created
 * before it gets it from a migration (UpdateTable).
 */
import type { AttributeDefinition, CreateTableCommandInput, GlobalSecondaryIndex } from '@aws-sdk/client-dynamodb';

export const GSI1 = 'GSI1';
export const GSI2 = 'GSI2';
export const LSI1 = 'LSI1';

/** GSI2: shop-wide orders (all, or by status) by placedAt, write-sharded (keys.ts). */
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
