/**
 * The playground's static assets: the GraphiQL app (with its Explorer plugin) and Monaco's three
 * workers, bundled by esbuild. GraphiQL 5 ships ESM only (no UMD bundle), so it must be bundled.
 *
 * Two places they come from:
 * - `npm run build` writes them to dist/playground/ (scripts/buildPlayground.ts), beside the
 *   compiled server. A production install (`npm ci --omit=dev`) has neither esbuild nor React nor
 *   GraphiQL: the built server serves that folder and never bundles.
 * - Where the bundler is installed (development, `npm start`), they are bundled on first use
 *   into node_modules/.cache, keyed by the app's source and the versions of what it bundles, so
 *   an edit or an upgrade rebuilds them and nothing else does.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { projectRoot } from '../../../projectRoot.js';

const require = createRequire(import.meta.url);
const BUNDLED_PACKAGES = [
  'graphiql',
  '@graphiql/toolkit',
  '@graphiql/plugin-explorer',
  'graphql-ws',
  'react',
  'react-dom',
  'esbuild',
];
/** Files a request may ask for; anything else is a 404. */
export const ASSET_FILE = /^[A-Za-z0-9_.-]+\.(js|css|ttf|woff2?)$/;

/** Thrown when the assets are neither built nor buildable here: its message says what to run. */
export class PlaygroundNotBuiltError extends Error {
  override name = 'PlaygroundNotBuiltError';
}

const appEntry = () => path.join(projectRoot(), 'src', 'transports', 'http', 'playground', 'browser', 'app.tsx');

/** Where `npm run build` puts the assets. */
export const builtAssetsDir = (): string => path.join(projectRoot(), 'dist', 'playground');

const bundlerInstalled = (): boolean => {
  try {
    require.resolve('esbuild');
    require.resolve('graphiql/package.json');
    return true;
  } catch {
    return false;
  }
};

function cacheKey(): string {
  const hash = createHash('sha256').update(readFileSync(appEntry()));
  for (const name of BUNDLED_PACKAGES) {
    const manifest = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string };
    hash.update(`${name}@${manifest.version}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Bundles the playground into `outdir` (replacing what is there), through a staging folder so
 * that a reader never sees half of it. esbuild is imported here only: the server loads it never
 * in production, and in development only when the cache has no build for this source.
 */
export async function buildPlaygroundAssets(outdir: string): Promise<void> {
  const { build } = await import('esbuild');
  const staging = `${outdir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
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
    outdir: staging,
    loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  // Another process may have finished first: its folder is as good as ours.
  if (existsSync(path.join(outdir, 'playground.js'))) return void rmSync(staging, { recursive: true, force: true });
  rmSync(outdir, { recursive: true, force: true });
  renameSync(staging, outdir);
}

let assets: Promise<string> | undefined;

/**
 * The folder holding the assets: bundled on first use where the bundler is installed, else the
 * build's. Rejects with PlaygroundNotBuiltError when there are none to serve. Concurrent callers
 * share one build; a failed build is retried by the next caller.
 */
export function playgroundAssets(): Promise<string> {
  assets ??= (async () => {
    if (!bundlerInstalled()) {
      if (existsSync(path.join(builtAssetsDir(), 'playground.js'))) return builtAssetsDir();
      throw new PlaygroundNotBuiltError(
        'the playground is not built and cannot be here (no bundler in a production install): run npm run build where the development dependencies are installed',
      );
    }
    const dir = path.join(projectRoot(), 'node_modules', '.cache', 'tablegraph-playground', cacheKey());
    if (!existsSync(path.join(dir, 'playground.js'))) await buildPlaygroundAssets(dir);
    return dir;
  })().catch((error: unknown) => {
    assets = undefined;
    throw error;
  });
  return assets;
}
