/**
 * The table's schema version and migration history, kept in the table itself: one item per
 * migration under `META#migrations` (src/table/entities/meta.ts), holding its state (running or applied), when it
 * started and finished, how many runs it took, and the checkpoint of an interrupted run.
 * The table's version is the number of applied migrations of the release's list.
 */
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EntityType } from '../table/codecs.js';
import { migrationKey, MIGRATIONS_PK } from '../table/keys.js';
import type { Checkpoint, Migration } from './migration.js';

export interface MigrationRecord {
  id: string;
  state: 'running' | 'applied';
  description: string;
  startedAt: string;
  appliedAt?: string | undefined;
  runs: number;
  /** True when a new table was created with everything the migration adds (nothing to do). */
  baseline?: boolean | undefined;
  checkpoint?: Checkpoint | undefined;
}

/** Every migration record of the table, by id (one Query, strongly consistent). */
export async function readRecords(
  doc: DynamoDBDocumentClient,
  tableName: string,
): Promise<Map<string, MigrationRecord>> {
  const records = new Map<string, MigrationRecord>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': MIGRATIONS_PK },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) records.set(String(item.id), item as unknown as MigrationRecord);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return records;
}

/** The migrations of `all` not applied to the table, in order. */
export const pendingOf = (all: readonly Migration[], records: Map<string, MigrationRecord>): Migration[] =>
  all.filter((migration) => records.get(migration.id)?.state !== 'applied');

/**
 * Marks a run as started (a resumed run keeps its checkpoint and counts one more run).
 * Returns undefined when the migration is already applied: another process (a second server
 * starting on the same table, or the one that created it) got there first.
 */
export async function startRecord(
  doc: DynamoDBDocumentClient,
  tableName: string,
  migration: Migration,
  at: string,
): Promise<MigrationRecord | undefined> {
  const result = await doc
    .send(
      new UpdateCommand({
        TableName: tableName,
        Key: migrationKey(migration.id),
        UpdateExpression:
          'SET entityType = :type, id = :id, description = :description, #state = :running, startedAt = if_not_exists(startedAt, :at), runs = if_not_exists(runs, :zero) + :one',
        ConditionExpression: 'attribute_not_exists(#state) OR #state = :running',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':type': EntityType.Meta,
          ':id': migration.id,
          ':description': migration.description,
          ':running': 'running',
          ':at': at,
          ':zero': 0,
          ':one': 1,
        },
        ReturnValues: 'ALL_NEW',
      }),
    )
    .catch((error: unknown) => {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    });
  return result?.Attributes as MigrationRecord | undefined;
}

/**
 * Thrown by saveCheckpoint when the migration is no longer running: another process, running
 * the same idempotent migration at the same time, finished it first.
 */
export class FinishedElsewhereError extends Error {
  override name = 'FinishedElsewhereError';
}

export async function saveCheckpoint(
  doc: DynamoDBDocumentClient,
  tableName: string,
  id: string,
  checkpoint: Checkpoint,
) {
  try {
    await doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: migrationKey(id),
        UpdateExpression: 'SET #checkpoint = :checkpoint',
        ConditionExpression: '#state = :running',
        ExpressionAttributeNames: { '#checkpoint': 'checkpoint', '#state': 'state' },
        ExpressionAttributeValues: { ':checkpoint': checkpoint, ':running': 'running' },
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') {
      throw new FinishedElsewhereError(`migration ${id} was finished by another process`);
    }
    throw error;
  }
}

export async function finishRecord(doc: DynamoDBDocumentClient, tableName: string, id: string, at: string) {
  await doc.send(
    new UpdateCommand({
      TableName: tableName,
      Key: migrationKey(id),
      UpdateExpression: 'SET #state = :applied, appliedAt = :at',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':applied': 'applied', ':at': at },
    }),
  );
}

/** A table created by this release has everything: its migrations are recorded as applied, with no work. */
export async function recordBaseline(
  doc: DynamoDBDocumentClient,
  tableName: string,
  all: readonly Migration[],
  at: string,
) {
  for (const migration of all) {
    await doc
      .send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...migrationKey(migration.id),
            entityType: EntityType.Meta,
            id: migration.id,
            description: migration.description,
            state: 'applied',
            startedAt: at,
            appliedAt: at,
            runs: 0,
            baseline: true,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      )
      .catch((error: unknown) => {
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
      });
  }
}
