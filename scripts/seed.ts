/**
 * `npm run seed`: restores the demo data. Uses the DynamoDB Local of a server running on
 * DATA_DIR if there is one, else starts its own (or uses DYNAMODB_ENDPOINT / AWS).
 */
import { loadScriptConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/open.js';
import { reseedDemo } from '../src/seed/seed.js';

const config = loadScriptConfig();
const db = await openDatabase(config, { reuseRunningLocal: true });
try {
  const written = await reseedDemo(db.dynamo.doc, config.tableName);
  console.log(`seeded ${written} demo items into ${config.tableName} on ${db.where}`);
} finally {
  await db.close();
}
