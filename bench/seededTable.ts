/**
 * What the side tools (bench:profile, bench:timeline, bench:idle-cpu) share before they measure:
 * a fresh table in their DynamoDB Local, the benchmark's data set seeded in the current format,
 * the operations over it and an admin's token for the systems.
 */
import { signToken } from '../src/auth/tokens.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { baselineNewTable } from '../src/migrations/runner.js';
import type { BenchConfig } from './config.js';
import { buildDataset, seedDataset } from './dataset.js';
import type { Dataset } from './dataset.js';
import { operations } from './operations.js';
import type { Operation } from './operations.js';
import { JWT_SECRET } from './systems.js';

export interface SeededTable {
  runId: string;
  tableName: string;
  data: Dataset;
  /** Every operation of the benchmark over this data set. */
  ops: Operation[];
  /** An admin's bearer token, as the benchmark's requests carry it. */
  headers: Record<string, string>;
}

/** `prefix` names the table (`<prefix>-<runId>`); `runTag` starts the run id. */
export async function seededTable(
  admin: Dynamo,
  endpoint: string,
  config: BenchConfig,
  prefix: string,
  runTag: string,
): Promise<SeededTable> {
  const runId = `${runTag}${Date.now().toString(36)}`;
  const tableName = `${prefix}-${runId}`;
  await ensureTable(admin.client, tableName, endpoint);
  // Seeded in the current format: without the baseline, a server would scan for migrations first.
  await baselineNewTable(admin.doc, tableName);
  const data = buildDataset(config);
  await seedDataset(admin.doc, tableName, data, config, () => undefined);
  const token = await signToken(
    { userId: 'bench-admin', role: 'admin' },
    { secret: JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' },
  );
  return { runId, tableName, data, ops: operations(data, runId), headers: { authorization: `Bearer ${token}` } };
}
