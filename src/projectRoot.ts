import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding package.json and schema.graphql, found by walking up from this module:
 * the same answer from `src/` (tsx) and from `dist/src/` (compiled).
 */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'schema.graphql'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('schema.graphql not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}
