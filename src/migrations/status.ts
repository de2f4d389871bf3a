/** Which migrations a table has had: read from the records in the table, nothing else. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { MIGRATION_CATALOG } from './catalog.js';
import type { MigrationEntry } from './catalog.js';
import { readRecords } from './records.js';
import type { MigrationRecord } from './records.js';

export interface MigrationStatus {
  id: string;
  description: string;
  state: MigrationRecord['state'] | 'pending';
  record: MigrationRecord | undefined;
}

export async function migrationStatus(
  doc: DynamoDBDocumentClient,
  tableName: string,
  all: readonly MigrationEntry[] = MIGRATION_CATALOG,
): Promise<{ version: number; migrations: MigrationStatus[] }> {
  const records = await readRecords(doc, tableName);
  const migrations = all.map((migration): MigrationStatus => {
    const record = records.get(migration.id);
    return { id: migration.id, description: migration.description, state: record?.state ?? 'pending', record };
  });
  return { version: migrations.filter((m) => m.state === 'applied').length, migrations };
}
