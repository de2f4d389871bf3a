/**
 * Builds the playground's static assets with esbuild: the GraphiQL app and Monaco's three
 * workers. GraphiQL 5 ships ESM only (no UMD bundle), so it must be bundled; esbuild does it
 * in a few seconds, and the result is cached under node_modules/.cache keyed by the app's
 * source and the versions of what it bundles, so it is built once per install.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';
import { projectRoot } from '../../../projectRoot.js';

const require = createRequire(import.meta.url);
const BUNDLED_PACKAGES = ['graphiql', '@graphiql/toolkit', 'graphql-ws', 'react', 'react-dom', 'esbuild'];
/** Files a request may ask for; anything else is a 404. */
export const ASSET_FILE = /^[A-Za-z0-9_.-]+\.(js|css|ttf|woff2?)$/;

const appEntry = () => path.join(projectRoot(), 'src', 'transports', 'http', 'playground', 'browser', 'app.tsx');

function cacheKey(): string {
  const hash = createHash('sha256').update(readFileSync(appEntry()));
  for (const name of BUNDLED_PACKAGES) {
    const manifest = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string };
    hash.update(`${name}@${manifest.version}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

async function buildInto(outdir: string): Promise<void> {
  await build({
    entryPoints: {
      playground: appEntry(),
      'editor.worker': 'monaco-editor/esm/vs/editor/editor.worker.js',
      'json.worker': 'monaco-editor/esm/vs/language/json/json.worker.js',
      'graphql.worker': 'monaco-graphql/esm/graphql.worker.js',
    },
    // Resolve the workers' packages from where graphiql's own dependencies live.
    nodePaths: [path.join(projectRoot(), 'node_modules')],
    absWorkingDir: projectRoot(),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    outdir,
    loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
}

let assets: Promise<string> | undefined;

/**
 * The folder holding the built assets, building them on first use. Concurrent callers share
 * one build; a failed build is retried by the next caller.
 */
export function playgroundAssets(): Promise<string> {
  assets ??= (async () => {
    const cacheRoot = path.join(projectRoot(), 'node_modules', '.cache', 'tablegraph-playground');
    const dir = path.join(cacheRoot, cacheKey());
    if (existsSync(path.join(dir, 'playground.js'))) return dir;
    const staging = `${dir}.${process.pid}.tmp`;
    rmSync(staging, { recursive: true, force: true });
    await buildInto(staging);
    // Another process may have finished first: its folder is as good as ours.
    if (existsSync(dir)) rmSync(staging, { recursive: true, force: true });
    else renameSync(staging, dir);
    return dir;
  })().catch((error: unknown) => {
    assets = undefined;
    throw error;
  });
  return assets;
}
