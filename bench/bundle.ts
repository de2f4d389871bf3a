/**
 * The benchmark's systems as they are deployed: tablegraph's server bundled by esbuild with the
 * settings of the image and the Lambda (deploy/bundle.ts), and the comparison servers (the raw
 * chain, the naive peer, the server with a lever off) bundled the same way, so that neither side
 * of a ratio runs under tsx (whose transform keeps function names: a `defineProperty` for every
 * closure a request creates).
 *
 * The bundle is built once per process, the first time a system starts, into a temporary folder
 * removed at exit: a few seconds against minutes of load, and never stale. Its layout is the
 * image's (`server.mjs` beside `schema.graphql` and the persisted documents; the benchmark's own
 * entries under `bench/`), and each system runs with that folder as its working directory, as
 * the container's `node server.mjs` runs in /app. An external source map beside each file (the
 * JavaScript is byte for byte the same as without it) lets the profile (profile.ts) name the
 * source file of each sampled function.
 */
import { SourceMap } from 'node:module';
import type { SourceMapPayload } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { bundleOptions, copyProjectFiles, temporaryFolder } from '../deploy/bundle.js';
import { CONTAINER_ENTRIES, CONTAINER_FILES } from '../deploy/containerImage.js';

/** Every entry a benchmark starts as a child process (systems.ts, cache.ts). */
export const BUNDLED_ENTRIES = [
  CONTAINER_ENTRIES.server,
  'bench/rawChain.ts',
  'bench/naivePeer.ts',
  'bench/serverLevers.ts',
] as const;

/** Where an entry lands in the folder: the server under the image's name, the bench's entries under bench/. */
export function bundledName(entry: string): string {
  if (entry === CONTAINER_ENTRIES.server) return 'server.mjs';
  return entry.replace(/\.ts$/, '.mjs');
}

export interface BenchBundle {
  /** The folder: the working directory of every bundled system. */
  dir: string;
  /** The bundled file of `entry` (one of BUNDLED_ENTRIES). */
  file(entry: string): string;
}

let built: BenchBundle | undefined;

/** Bundles every entry of BUNDLED_ENTRIES in one esbuild call, once per process. */
export function benchBundle(): BenchBundle {
  if (built) return built;
  const dir = temporaryFolder('tablegraph-bench-');
  buildSync({
    ...bundleOptions(),
    entryPoints: Object.fromEntries(BUNDLED_ENTRIES.map((entry) => [bundledName(entry).replace(/\.mjs$/, ''), entry])),
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    sourcemap: 'external',
  });
  copyProjectFiles(CONTAINER_FILES, dir);
  built = {
    dir,
    file(entry) {
      if (!(BUNDLED_ENTRIES as readonly string[]).includes(entry)) {
        throw new Error(`${entry} is not bundled for the benchmark: add it to BUNDLED_ENTRIES (bench/bundle.ts)`);
      }
      return path.join(dir, bundledName(entry));
    },
  };
  return built;
}

const maps = new Map<string, SourceMap | null>();

function sourceMapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    const mapFile = `${file}.map`;
    map = existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')) as SourceMapPayload) : null;
    maps.set(file, map);
  }
  return map;
}

/**
 * The source file (a `file:` URL) that position `line`:`column` (0-based, as a CPU profile's call
 * frame gives them) of `url` was bundled from; `url` itself when it is no bundle with a map.
 */
export function originalUrl(url: string, line: number, column: number): string {
  if (!url.startsWith('file:') || !url.endsWith('.mjs')) return url;
  const file = fileURLToPath(url);
  const map = sourceMapOf(file);
  if (!map || line < 0) return url;
  const entry = map.findEntry(line, Math.max(column, 0));
  if (!('originalSource' in entry) || !entry.originalSource) return url;
  const source = entry.originalSource.startsWith('file:')
    ? fileURLToPath(entry.originalSource)
    : path.resolve(path.dirname(file), entry.originalSource);
  return pathToFileURL(source).href;
}
