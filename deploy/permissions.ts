/**
 * Exactly the DynamoDB actions each function and each of the fleet's containers calls, read from
 * its code (test/stack.test.ts and test/stack.fleet.test.ts derive the same lists from the
 * bundles and fail when they differ). A transaction needs the
 * action of each of its parts (Put -> PutItem, Update -> UpdateItem, Delete -> DeleteItem,
 * ConditionCheck -> ConditionCheckItem); there is no TransactWriteItems action in IAM.
 */
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import type { LambdaName } from './bundle.js';
import type { ContainerName } from './containerImage.js';

/** What runs with a role of the stack: a function, or a container of the fleet. */
export type Workload = LambdaName | ContainerName;

export interface DynamoPermissions {
  /** Actions on the table itself. */
  table: readonly string[];
  /** Actions that may name a secondary index (only Query does, here). */
  indexes: readonly string[];
  /** Actions on the table's stream. */
  stream: readonly string[];
}

/**
 * What the API calls, as a function or as a task: loaders (BatchGetItem), pages (Query),
 * consistent re-reads in writes (GetItem), createProduct (PutItem), profile and product updates
 * (UpdateItem), and the transactions of createUser, placeOrder, status changes and e-mail
 * changes (PutItem, UpdateItem, DeleteItem).
 */
const API_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
];

export const DYNAMODB_PERMISSIONS: Record<Workload, DynamoPermissions> = {
  graphql: { table: API_ACTIONS, indexes: ['dynamodb:Query'], stream: [] },
  streams: {
    // soldCount's transactions: marker Put/Update, product Update, and a ConditionCheck.
    table: ['dynamodb:ConditionCheckItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    indexes: [],
    // What the event source mapping's poller calls with the function's role.
    stream: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
  },
  server: {
    // The GraphQL function's actions, and DescribeTable: the check of the table at start-up and
    // /readyz. Its in-process stream consumer is off (STREAM_CONSUMER=false), and in aws mode it
    // neither creates, migrates nor seeds the table.
    table: [...API_ACTIONS, 'dynamodb:DescribeTable'].sort(),
    indexes: ['dynamodb:Query'],
    stream: [],
  },
  consumer: {
    // The stream's ARN and /readyz (DescribeTable); checkpoints and leases (Get, Put, Update,
    // Delete, Query, BatchWrite); soldCount's transactions and the lease fence (ConditionCheck).
    table: [
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
      'dynamodb:DescribeTable',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ],
    indexes: [],
    // Its own reads of the shards (a Lambda's poller also lists the streams).
    stream: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
  },
};

export interface TableArns {
  table: string;
  indexes: string[];
  stream: string;
}

/** Adds one statement per resource kind to `role`: never dynamodb:* and never Resource "*". */
export function grantDynamo(role: IRole, name: Workload, arns: TableArns): void {
  const permissions = DYNAMODB_PERMISSIONS[name];
  const statements: [readonly string[], string[]][] = [
    [permissions.table, [arns.table]],
    [permissions.indexes, arns.indexes],
    [permissions.stream, [arns.stream]],
  ];
  for (const [actions, resources] of statements) {
    if (actions.length > 0 && resources.length > 0) {
      role.addToPrincipalPolicy(new PolicyStatement({ actions: [...actions], resources }));
    }
  }
}
