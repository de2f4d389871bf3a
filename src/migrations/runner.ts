/**
 * Applies the release's pending migrations, in order, each from its last checkpoint, paced
 * by a CapacityLimiter, printing a progress line per page. `npm run migrate` runs this; so
 * does `npm start` in embedded and endpoint mode, before it serves.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CapacityLimiter, DEFAULT_RATE } from './capacityLimiter.js';
import type { CapacityRate } from './capacityLimiter.js';
import type { Checkpoint, Migration } from './migration.js';
import {
  finishRecord,
  FinishedElsewhereError,
  pendingOf,
  readRecords,
  recordBaseline,
  saveCheckpoint,
  startRecord,
} from './records.js';
import { MIGRATIONS } from './registry.js';

export interface MigrateOptions {
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  tableName: string;
  rate?: CapacityRate | undefined;
  /** One line of progress (the CLI prints it, the server logs it). */
  report?: ((line: string, fields: Record<string, unknown>) => void) | undefined;
  migrations?: readonly Migration[] | undefined;
  /** Tests: see MigrationRun.afterWrite. */
  afterWrite?: ((written: number) => void) | undefined;
}

export interface MigrateResult {
  applied: string[];
  /** Items written and capacity spent, over every migration applied. */
  readUnits: number;
  writeUnits: number;
  seconds: number;
}

/** Applies every pending migration; returns which were applied (none when the table is current). */
export async function migrate(options: MigrateOptions): Promise<MigrateResult> {
  const { doc, tableName, report = () => undefined } = options;
  const all = options.migrations ?? MIGRATIONS;
  const limiter = new CapacityLimiter(options.rate ?? DEFAULT_RATE);
  const started = performance.now();
  const applied: string[] = [];
  for (const migration of pendingOf(all, await readRecords(doc, tableName))) {
    const record = await startRecord(doc, tableName, migration, new Date().toISOString());
    if (!record) {
      report(`${migration.id}: applied meanwhile by another process`, { migration: migration.id });
      continue;
    }
    const resumeFrom = record.checkpoint;
    report(
      resumeFrom
        ? `${migration.id}: resuming at phase ${resumeFrom.phase} (${resumeFrom.scanned} items scanned before, run ${record.runs})`
        : `${migration.id}: applying (${migration.description})`,
      { migration: migration.id, resumed: resumeFrom !== undefined },
    );
    const runStarted = performance.now();
    const finishedElsewhere = await migration
      .run({
        client: options.client,
        doc,
        tableName,
        limiter,
        resumeFrom,
        afterWrite: options.afterWrite,
        checkpoint: (checkpoint) => saveCheckpoint(doc, tableName, migration.id, checkpoint),
        progress: (checkpoint: Checkpoint, note?: string) => {
          const seconds = (performance.now() - runStarted) / 1000;
          const rate = seconds > 0 ? Math.round((checkpoint.scanned - (resumeFrom?.scanned ?? 0)) / seconds) : 0;
          report(
            `${migration.id}: ${note ?? `${checkpoint.phase}: ${checkpoint.scanned} scanned, ${checkpoint.updated} updated, ${round(limiter.readUnits)} RCU, ${round(limiter.writeUnits)} WCU, ${rate} items/s`}`,
            {
              migration: migration.id,
              ...checkpoint,
              position: undefined,
              readUnits: limiter.readUnits,
              writeUnits: limiter.writeUnits,
              itemsPerSecond: rate,
            },
          );
        },
      })
      .then(
        () => false,
        (error: unknown) => {
          // Two processes may run one migration at once (two servers starting on one table):
          // its writes are idempotent, so the one that finishes second only has to stop.
          if (error instanceof FinishedElsewhereError) return true;
          throw error;
        },
      );
    if (finishedElsewhere) {
      report(`${migration.id}: applied meanwhile by another process`, { migration: migration.id });
      continue;
    }
    await finishRecord(doc, tableName, migration.id, new Date().toISOString());
    report(`${migration.id}: applied`, { migration: migration.id });
    applied.push(migration.id);
  }
  return {
    applied,
    readUnits: limiter.readUnits,
    writeUnits: limiter.writeUnits,
    seconds: (performance.now() - started) / 1000,
  };
}

const round = (units: number) => Math.round(units * 10) / 10;

/** Where the table stands with each migration (for `--status` and the aws-mode gate). */
export { migrationStatus } from './status.js';
export type { MigrationStatus } from './status.js';

/** For a table this release just created: records every migration as applied, with nothing to do. */
export const baselineNewTable = (doc: DynamoDBDocumentClient, tableName: string) =>
  recordBaseline(doc, tableName, MIGRATIONS, new Date().toISOString());
