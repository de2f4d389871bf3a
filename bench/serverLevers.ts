/**
 * The server with a lever off, for the benchmark's interleaved comparisons (systems.ts): what
 * the lever is worth. The levers are not settings of the server (it always has them on), so the
 * benchmark starts this entry instead of src/main.ts, with the same environment.
 *
 * Levers (the first argument):
 * - `no-item-collections`: a user and the first page of their orders in two requests (GetItem,
 *   then a Query) instead of one Query of their item collection.
 *
 * Run: node --import tsx bench/serverLevers.ts no-item-collections, with the server's environment.
 */
import { loadServerConfig } from '../src/config/index.js';
import { runMain } from '../src/runMain.js';
import { startServer, USER_FACING } from '../src/server.js';
import type { Levers } from '../src/server.js';

const LEVERS: Record<string, Levers> = {
  'no-item-collections': { itemCollections: false },
};

const name = process.argv[2] ?? '';
const levers = LEVERS[name];
if (!levers) {
  process.stderr.write(`bench/serverLevers.ts: name a lever (${Object.keys(LEVERS).join(', ')}), not "${name}"\n`);
  process.exit(2);
}
runMain('tablegraph', () => startServer(loadServerConfig(), levers), USER_FACING);
