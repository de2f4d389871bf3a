/**
 * `npm run seed`: restores the demo data. Uses the DynamoDB Local of a server running on
 * DATA_DIR if there is one, else starts its own (or uses DYNAMODB_ENDPOINT / AWS).
 */
import { parseCommandLine } from '../src/cli.js';
import { loadScriptConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/open.js';
import { reseedDemo } from '../src/seed/seed.js';

parseCommandLine({
  name: 'seed',
  run: 'npm run seed --',
  usage: `

Restores the demo data (users alice and bob, the products, alice's orders) into TABLE_NAME. Uses
the DynamoDB Local of a server running on DATA_DIR if there is one, else starts its own (or uses
DYNAMODB_ENDPOINT, or DYNAMODB_MODE=aws). Takes no flags: every setting is an environment
variable (docs/configuration.md).`,
});

const config = loadScriptConfig();
const db = await openDatabase(config, { reuseRunningLocal: true });
try {
  const written = await reseedDemo(db.dynamo.doc, config.tableName);
  console.log(`seeded ${written} demo items into ${config.tableName} on ${db.where}`);
} finally {
  await db.close();
}
