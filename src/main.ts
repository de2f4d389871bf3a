/**
 * `npm start`: the server (src/server.ts) with the configuration of the environment.
 */
import { parseCommandLine } from './cli.js';
import { loadServerConfig } from './config/index.js';
import { runMain } from './runMain.js';
import { startServer, USER_FACING } from './server.js';

parseCommandLine({
  name: 'tablegraph',
  run: 'npm start --',
  usage: `

Starts the API server: GraphQL over HTTP, WebSocket and SSE at /graphql, the playground in
development, /healthz, /readyz and /metrics. With no configuration it starts DynamoDB Local
(Java 17+) persisting to ./.data/, creates the table and seeds the demo data on the first start.
Takes no flags: every setting is an environment variable (docs/configuration.md). Production
runs the build directly: npm run build && node dist/src/main.js.`,
});
runMain('tablegraph', () => startServer(loadServerConfig()), USER_FACING);
