/**
 * Steps the migrations share: adding a GSI to a table that lacks it (one per UpdateTable, as
 * DynamoDB allows), and an idempotent conditional write paced by the capacity limiter.
 */
import { DescribeTableCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeDefinition, GlobalSecondaryIndex, TableDescription } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { MigrationRun } from './migration.js';

const INDEX_POLL_MS = 1000;
const INDEX_WAIT_MS = 6 * 60 * 60 * 1000;

async function describe(run: MigrationRun): Promise<TableDescription> {
  const { Table } = await run.client.send(new DescribeTableCommand({ TableName: run.tableName }));
  if (!Table) throw new Error(`table ${run.tableName} has no description`);
  return Table;
}

/** Creates `index` when the table lacks it, then waits until it (and the table) are ACTIVE. */
export async function ensureIndex(
  run: MigrationRun,
  index: GlobalSecondaryIndex,
  attributes: AttributeDefinition[],
): Promise<void> {
  const name = index.IndexName ?? '';
  const table = await describe(run);
  if (!table.GlobalSecondaryIndexes?.some((existing) => existing.IndexName === name)) {
    const onDemand =
      table.BillingModeSummary?.BillingMode === 'PAY_PER_REQUEST' || !table.ProvisionedThroughput?.ReadCapacityUnits;
    await run.client.send(
      new UpdateTableCommand({
        TableName: run.tableName,
        AttributeDefinitions: attributes,
        GlobalSecondaryIndexUpdates: [
          {
            Create: {
              ...index,
              // A provisioned table's new index starts with the table's own throughput.
              ...(onDemand
                ? {}
                : {
                    ProvisionedThroughput: {
                      ReadCapacityUnits: table.ProvisionedThroughput?.ReadCapacityUnits,
                      WriteCapacityUnits: table.ProvisionedThroughput?.WriteCapacityUnits,
                    },
                  }),
            },
          },
        ],
      }),
    );
    run.progress({ phase: 'index', scanned: 0, updated: 0 }, `creating ${name}`);
  }
  const deadline = Date.now() + INDEX_WAIT_MS;
  for (;;) {
    const current = await describe(run);
    const created = current.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === name);
    if (current.TableStatus === 'ACTIVE' && created?.IndexStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`${name} did not become ACTIVE within ${INDEX_WAIT_MS / 60000} minutes`);
    await new Promise((resolve) => setTimeout(resolve, INDEX_POLL_MS));
  }
}

/** Sends one conditional update; false when its condition failed (someone else wrote it first). */
export async function write(run: MigrationRun, update: UpdateCommandInput): Promise<boolean> {
  await run.limiter.before('write');
  try {
    const result = await run.doc.send(new UpdateCommand(update));
    run.limiter.spent('write', result.ConsumedCapacity?.CapacityUnits);
    return true;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    run.limiter.spent('write', 1);
    return false;
  } finally {
    run.afterWrite?.(1);
  }
}
