/**
 * The Layout block of docs/development.md names every folder of src/ (and of src/transports/),
 * and no folder that is not there: a folder added, moved or removed fails here until the block
 * says so.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/projectRoot.js';

const ROOT = projectRoot();

/** The `src/.../` folders the Layout block lists, in its order. */
function listedFolders(): string[] {
  const page = readFileSync(path.join(ROOT, 'docs', 'development.md'), 'utf8');
  const block = /## Layout\n\n```\n([\s\S]*?)```/.exec(page)?.[1];
  if (block === undefined) throw new Error('docs/development.md has no Layout block');
  return block
    .split('\n')
    .map((line) => line.split(/\s+/)[0] ?? '')
    .filter((entry) => entry.startsWith('src/') && entry.endsWith('/'))
    .map((entry) => entry.slice(0, -1));
}

const foldersOf = (relative: string) =>
  readdirSync(path.join(ROOT, relative), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${relative}/${entry.name}`);

describe('the Layout block of docs/development.md', () => {
  const listed = listedFolders();
  // src/transports/ is listed by its transports, not as one line.
  const present = [...foldersOf('src').filter((folder) => folder !== 'src/transports'), ...foldersOf('src/transports')];

  it('lists every folder of src/', () => {
    expect(present.filter((folder) => !listed.includes(folder))).toEqual([]);
  });

  it('lists no folder that src/ does not have', () => {
    expect(listed.filter((folder) => !present.includes(folder))).toEqual([]);
  });
});
