/**
 * What a migration is, and what it gets to run with. A migration must be idempotent (running
 * it twice, or resuming it from any checkpoint after a crash, ends in the same table) and
 * resumable (it saves a checkpoint after each page of work, and starts from the last one).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CapacityLimiter } from './capacityLimiter.js';

/** Where a migration was: its phase and the position within it (a Scan's LastEvaluatedKey, ...). */
export interface Checkpoint {
  phase: string;
  position?: Record<string, unknown> | undefined;
  /** Running totals, carried across resumes for the progress lines. */
  scanned: number;
  updated: number;
}

export interface MigrationRun {
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  tableName: string;
  limiter: CapacityLimiter;
  /** The checkpoint saved by an earlier, interrupted run; undefined on a first run. */
  resumeFrom: Checkpoint | undefined;
  /** Saves where the migration is; called after each page of work. */
  checkpoint(checkpoint: Checkpoint): Promise<void>;
  /** One progress line (phase, totals, capacity spent, rate). */
  progress(checkpoint: Checkpoint, note?: string): void;
  /** Tests: called after every item written; throwing from it stops the run as a crash would. */
  afterWrite?: ((written: number) => void) | undefined;
}

export interface Migration {
  /** `0001-shop-orders-index`: sorts in the order migrations apply. */
  id: string;
  description: string;
  run(run: MigrationRun): Promise<void>;
}
