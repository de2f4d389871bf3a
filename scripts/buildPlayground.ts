/**
 * `npm run build` (after tsc): bundles the playground into dist/playground/, so the built server
 * serves it from a production install, which has no bundler, React or GraphiQL.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { parseCommandLine } from '../src/cli.js';
import { buildPlaygroundAssets, builtAssetsDir } from '../src/transports/http/playground/bundle.js';

parseCommandLine({
  name: 'build:playground',
  run: 'npm run build:playground --',
  usage: `

Bundles the playground (GraphiQL, its Explorer plugin, Monaco's workers) into dist/playground/ with
esbuild, for the built server (npm run build runs it after the compiler). Takes no flags.`,
});

const started = performance.now();
const dir = builtAssetsDir();
rmSync(dir, { recursive: true, force: true });
await buildPlaygroundAssets(dir);
console.log(
  `wrote ${path.relative(process.cwd(), dir)} (the playground, bundled in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
);
