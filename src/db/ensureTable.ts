import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceNotFoundException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableDefinition } from '../table/definition.js';

/** A start-up failure whose message is the one line a user sees. */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}

/**
 * Creates the table (with GSI1, LSI1 and its stream) if it does not exist and waits until it
 * is ACTIVE. Returns whether it created it. An unreachable endpoint becomes DatabaseUnreachableError.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string, where: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return false;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) {
      const reason = error instanceof Error ? error.message || error.name : String(error);
      throw new DatabaseUnreachableError(
        `Cannot reach DynamoDB at ${where} (${reason.split('\n')[0]}): check DYNAMODB_ENDPOINT / DYNAMODB_MODE and that the database is running`,
      );
    }
  }
  await client.send(new CreateTableCommand(tableDefinition(tableName)));
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1 }, { TableName: tableName });
  return true;
}
