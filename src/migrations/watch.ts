/**
 * The aws-mode migration watch. There migrating is the operator's step (`npm run migrate`,
 * capacity-paced): a process serves what the table supports, refuses the rest with
 * MIGRATION_PENDING (db/schemaGate.ts), and looks at the migration records again, at most once
 * per `recheckMs`, until none is pending. The server looks on a timer; the GraphQL Lambda on a
 * request's time, since no timer runs while a function is frozen.
 *
 * Imports the status reader only (not the runner): the Lambda bundle carries no migration code.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from 'pino';
import type { SchemaGate } from '../db/schemaGate.js';
import { migrationStatus } from './status.js';

/** How often a process with pending migrations looks again. */
export const MIGRATION_RECHECK_MS = 60_000;

export interface MigrationWatchOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** Updated with the pending migrations after each look. */
  gate: SchemaGate;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** `timer`: look again on an unref'd interval; `on-request`: only when `check()` is called. */
  polling: 'timer' | 'on-request';
  recheckMs?: number | undefined;
}

export interface MigrationWatch {
  /**
   * Reads the records when a look is due: on the first call, then at most once per `recheckMs`
   * while a migration is pending; resolves at once otherwise. Rejects when the read fails (the
   * next call tries again).
   */
  check(): Promise<void>;
  /** Stops the timer (if any). */
  stop(): void;
}

export function watchMigrations({
  doc,
  tableName,
  gate,
  log,
  polling,
  recheckMs = MIGRATION_RECHECK_MS,
}: MigrationWatchOptions): MigrationWatch {
  let checkedAt: number | undefined;
  let warned = false;
  let timer: NodeJS.Timeout | undefined;

  const look = async (): Promise<void> => {
    const wasPending = gate.pendingMigrations.length > 0;
    const { migrations } = await migrationStatus(doc, tableName);
    gate.update(migrations.filter((m) => m.state !== 'applied').map((m) => m.id));
    const pending = gate.pendingMigrations;
    if (pending.length > 0 && !warned) {
      warned = true;
      log.warn(
        { pending },
        `table ${tableName} needs migration ${pending.join(', ')}: run npm run migrate (the fields that need it answer MIGRATION_PENDING until then)`,
      );
    }
    if (pending.length === 0 && wasPending) log.info({ table: tableName }, 'table migrated: serving every field');
    if (pending.length > 0 && polling === 'timer' && !timer) {
      timer = setInterval(() => {
        look().catch((error: unknown) => log.error({ err: error }, 'migration re-check failed'));
      }, recheckMs);
      timer.unref();
    }
    if (pending.length === 0) stop();
  };

  const stop = (): void => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  return {
    async check() {
      const now = Date.now();
      if (checkedAt !== undefined && (gate.pendingMigrations.length === 0 || now - checkedAt < recheckMs)) return;
      checkedAt = now;
      await look();
    },
    stop,
  };
}
