/**
 * The layer allow-list (layers.json, enforced by eslint.config.js): it has no cycle, it keeps the
 * design's chain, it refuses the imports the design forbids, and every module of src/ and
 * resolvers/ belongs to exactly one layer.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLayers } from '../../scripts/docs/layers.js';
import { projectRoot } from '../../src/projectRoot.js';

const layers = readLayers();
const allows = (from: string, to: string): boolean => {
  const layer = layers.find(({ name }) => name === from);
  if (!layer) throw new Error(`no layer "${from}"`);
  if (!layers.some(({ name }) => name === to)) throw new Error(`no layer "${to}"`);
  return from === to || layer.imports.includes(to);
};

/** The globs layers.json uses: a file path, or a folder followed by `/**`. */
const matches = (pattern: string, file: string): boolean =>
  pattern.endsWith('/**') ? file.startsWith(pattern.slice(0, -2)) : file === pattern;

const modules = (folder: string): string[] =>
  readdirSync(path.join(projectRoot(), folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file))
    .map((file) => path.posix.join(folder, file.split(path.sep).join('/')));

describe('the layer allow-list', () => {
  it('keeps the design chain: table, db, writes, the GraphQL layers, transports, entry points', () => {
    const chain = [
      'table',
      'db',
      'writes',
      'graphql',
      'resolvers',
      'pipeline/schema',
      'pipeline',
      'transports',
      'entry',
    ];
    const links = chain.slice(1).map((from, index) => [from, chain[index] as string]);
    expect(links.filter(([from, to]) => !allows(from as string, to as string))).toEqual([]);
  });

  it.each([
    ['auth', 'streams'],
    ['streams', 'seed'],
    ['streams', 'writes'],
    ['db', 'events'],
    ['graphql', 'migrations'],
    ['pipeline', 'writes'],
    ['transports', 'streams'],
    ['transports', 'migrations'],
    ['table', 'db'],
    // The request core's stages: none reaches up into the core or into GraphQL over HTTP.
    ['pipeline/admission', 'pipeline/execution'],
    ['pipeline/admission', 'pipeline'],
    ['pipeline/execution', 'pipeline'],
    ['pipeline/report', 'pipeline/execution'],
    ['pipeline/responseCache', 'pipeline/report'],
    ['pipeline', 'pipeline/http'],
  ])('forbids %s -> %s', (from, to) => {
    expect(allows(from, to)).toBe(false);
  });

  it('lets a layer import only layers listed before it', () => {
    const order = layers.map(({ name }) => name);
    const upward = layers.flatMap(({ name, imports }) =>
      imports.filter((to) => order.indexOf(to) >= order.indexOf(name)).map((to) => `${name} -> ${to}`),
    );
    expect(upward).toEqual([]);
  });

  it('puts every module of src/ and resolvers/ in exactly one layer', () => {
    const misplaced = [...modules('src'), ...modules('resolvers')]
      .map((file) => ({ file, in: layers.filter((layer) => layer.files.some((glob) => matches(glob, file))) }))
      .filter((entry) => entry.in.length !== 1)
      .map((entry) => `${entry.file}: ${entry.in.map(({ name }) => name).join(', ') || 'no layer'}`);
    expect(misplaced).toEqual([]);
  });
});
