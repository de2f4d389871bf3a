/**
 * Bundles an entry point (a Lambda handler, or the server and the consumer for the container
 * image, containerImage.ts) with esbuild (the project's own dependency), offline and with no
 * Docker: CDK's NodejsFunction would fall back to a Docker image where it finds no local esbuild,
 * and hashes the staged output together with settings of the machine it runs on. Here the bundle
 * is one ESM file plus the data files the code reads at run time, and the asset hash is computed
 * from those bytes alone, so every clone and machine synthesizes the same template.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import type { BuildOptions } from 'esbuild';
import { projectRoot } from '../src/projectRoot.js';

export interface LambdaEntry {
  /** The entry module, relative to the project root. */
  entry: string;
  /** Files the code reads at run time (relative to the project root, kept at the same place). */
  files: readonly string[];
}

/** The two functions of the stack; the handler export is `index.handler` in both bundles. */
export const LAMBDA_ENTRIES = {
  graphql: {
    entry: 'src/lambda/graphql.ts',
    // projectRoot() finds the folder holding schema.graphql: in the bundle that is its own root.
    files: ['schema.graphql', 'client/generated/persisted-documents.json'],
  },
  streams: { entry: 'src/lambda/streams.ts', files: [] },
} as const satisfies Record<string, LambdaEntry>;

export type LambdaName = keyof typeof LAMBDA_ENTRIES;

export interface BundleFolder {
  /** A folder holding the bundle and its data files: what the code asset zips, or the image copies. */
  dir: string;
  /** sha256 of the folder's relative paths and bytes: the asset hash. */
  hash: string;
}

/** A fresh folder under the system's temporary folder, removed when the process exits. */
export function temporaryFolder(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The Node.js version the bundle's syntax targets: the project's own minimum. */
export const BUNDLE_TARGET = 'node24';

// ESM output still meets CommonJS dependencies that call require() for Node built-ins.
const REQUIRE_SHIM =
  "import { createRequire as __tablegraphCreateRequire } from 'node:module';\n" +
  'const require = __tablegraphCreateRequire(import.meta.url);';

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = path.posix.join(prefix, entry.name);
      return entry.isDirectory() ? listFiles(dir, relative) : [relative];
    })
    .sort();
}

/** sha256 over each file's relative path and bytes, in sorted order (no times, no absolute paths). */
export function hashFolder(dir: string): string {
  const hash = createHash('sha256');
  for (const file of listFiles(dir)) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(path.join(dir, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/**
 * The settings of every bundle of the stack: one ESM file per entry for Node.js 24, the AWS SDK
 * and every other dependency inside it. The benchmark bundles its systems with the same settings
 * (bench/bundle.ts), so what it measures is what ships.
 */
export function bundleOptions(): BuildOptions {
  return {
    absWorkingDir: projectRoot(),
    bundle: true,
    platform: 'node',
    target: BUNDLE_TARGET,
    format: 'esm',
    banner: { js: REQUIRE_SHIM },
    // The bundle stays readable (stack traces name real functions); licences stay in node_modules.
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'error',
  };
}

/**
 * Bundles `entry` (relative to the project root) into the one ESM file `outfile`: every bundle of
 * the stack, Lambda or container, is built by this call. Throws esbuild's error (with file and
 * line) when the entry does not build.
 */
export function bundleEntry(entry: string, outfile: string): void {
  buildSync({ ...bundleOptions(), entryPoints: [path.join(projectRoot(), entry)], outfile });
}

/** Copies the project's `files` into `dir`, each at the same relative place. */
export function copyProjectFiles(files: readonly string[], dir: string): void {
  const root = projectRoot();
  for (const file of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    copyFileSync(path.join(root, file), path.join(dir, file));
  }
}

/** Bundles `name` into a fresh folder under `outDir` (a temporary folder by default). */
export function bundleLambda(name: LambdaName, outDir: string = temporaryFolder('tablegraph-bundle-')): BundleFolder {
  const { entry, files } = LAMBDA_ENTRIES[name];
  const dir = path.join(outDir, name);
  mkdirSync(dir, { recursive: true });
  bundleEntry(entry, path.join(dir, 'index.mjs'));
  copyProjectFiles(files, dir);
  return { dir, hash: hashFolder(dir) };
}

const bundles = new Map<LambdaName, BundleFolder>();

/** bundleLambda, once per process: a test file that synthesizes twice bundles once. */
export function cachedBundle(name: LambdaName): BundleFolder {
  let bundle = bundles.get(name);
  if (!bundle) {
    bundle = bundleLambda(name);
    bundles.set(name, bundle);
  }
  return bundle;
}
