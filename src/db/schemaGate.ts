/**
 * Which parts of the API the table can serve yet. A table created by an older release lacks
 * what later migrations add (an index, counters); until `npm run migrate` has applied them, the
 * fields that need them are refused with MIGRATION_PENDING instead of answering wrongly (an
 * empty shop-wide list, counts of zero). Embedded and endpoint mode migrate before serving, so
 * there the gate is open from the start; `aws` mode leaves migrating to the operator.
 */
import { GraphQLError } from 'graphql';
import { ErrorCode } from '../errors.js';

export class MigrationPendingError extends GraphQLError {
  constructor(field: string, pending: readonly string[]) {
    super(
      `${field} needs table migration ${pending.join(', ')}, not applied yet: an operator must run npm run migrate`,
      { extensions: { code: ErrorCode.MIGRATION_PENDING } },
    );
  }
}

export class SchemaGate {
  private pending: readonly string[];

  constructor(pending: readonly string[] = []) {
    this.pending = pending;
  }

  /** Migrations the table still lacks (ids), oldest first. */
  get pendingMigrations(): readonly string[] {
    return this.pending;
  }

  /** Throws MIGRATION_PENDING naming `field` while any migration is pending. */
  assertMigrated(field: string): void {
    if (this.pending.length > 0) throw new MigrationPendingError(field, this.pending);
  }

  /** Called when a re-check finds the table migrated (by `npm run migrate`, elsewhere). */
  update(pending: readonly string[]): void {
    this.pending = pending;
  }
}

/** The gate of a table this release created or migrated itself. */
export const OPEN_GATE = new SchemaGate();
