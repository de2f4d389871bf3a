/**
 * `npm run migrate`: applies the table's pending migrations (resuming an interrupted one from
 * its checkpoint), paced to a capacity budget, printing progress.
 * `npm run migrate -- --status` lists the migrations and where the table stands.
 * Options: `--rcu <units/s>` and `--wcu <units/s>` (default 200 each).
 * Uses the DynamoDB Local of a server running on DATA_DIR if there is one, else starts its own
 * (or uses DYNAMODB_ENDPOINT / DYNAMODB_MODE=aws).
 */
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { loadScriptConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/open.js';
import { DEFAULT_RATE } from '../src/migrations/capacityLimiter.js';
import { baselineNewTable, migrate, migrationStatus } from '../src/migrations/runner.js';

const COMMAND = {
  name: 'migrate',
  run: 'npm run migrate --',
  usage: `[--status] [--rcu <units/s>] [--wcu <units/s>]

Applies the table's pending migrations (an interrupted one resumes from its checkpoint), paced to
a capacity budget. Uses the DynamoDB Local of a server running on DATA_DIR if there is one, else
starts its own (or uses DYNAMODB_ENDPOINT, or DYNAMODB_MODE=aws).

  --status          lists the migrations and where the table stands; changes nothing
  --rcu <units/s>   read capacity to spend per second (default ${DEFAULT_RATE.readUnitsPerSecond})
  --wcu <units/s>   write capacity to spend per second (default ${DEFAULT_RATE.writeUnitsPerSecond})`,
  options: {
    status: { type: 'boolean', default: false },
    rcu: { type: 'string', default: String(DEFAULT_RATE.readUnitsPerSecond) },
    wcu: { type: 'string', default: String(DEFAULT_RATE.writeUnitsPerSecond) },
  },
} as const;

const { values } = parseCommandLine(COMMAND);
const rate = { readUnitsPerSecond: Number(values.rcu), writeUnitsPerSecond: Number(values.wcu) };
for (const [flag, value] of [
  ['--rcu', rate.readUnitsPerSecond],
  ['--wcu', rate.writeUnitsPerSecond],
] as const) {
  if (!(value > 0)) exitWithUsageError(COMMAND, `${flag} must be a positive number of capacity units per second`);
}

const config = loadScriptConfig();
const db = await openDatabase(config, { reuseRunningLocal: true });
try {
  const { doc, client } = db.dynamo;
  if (db.tableCreated) await baselineNewTable(doc, config.tableName);
  if (values.status) {
    const status = await migrationStatus(doc, config.tableName);
    console.log(`${config.tableName} on ${db.where}: schema version ${status.version} of ${status.migrations.length}`);
    for (const migration of status.migrations) {
      const record = migration.record;
      const detail =
        migration.state === 'applied'
          ? `applied ${record?.appliedAt ?? ''}${record?.baseline ? ' (table created with it)' : ` in ${record?.runs ?? 1} run(s)`}`
          : migration.state === 'running'
            ? `interrupted at ${record?.checkpoint?.phase ?? 'start'} (${record?.checkpoint?.scanned ?? 0} items scanned); npm run migrate resumes it`
            : 'pending';
      console.log(`  ${migration.id}  ${migration.state.padEnd(8)} ${migration.description}: ${detail}`);
    }
  } else {
    const result = await migrate({
      client,
      doc,
      tableName: config.tableName,
      rate,
      report: (line) => console.log(line),
    });
    console.log(
      result.applied.length === 0
        ? `${config.tableName} is up to date: nothing to migrate`
        : `applied ${result.applied.join(', ')} in ${result.seconds.toFixed(1)} s (${Math.round(result.readUnits)} RCU, ${Math.round(result.writeUnits)} WCU)`,
    );
  }
} finally {
  await db.close();
}
