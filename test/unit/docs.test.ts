/**
 * The repository stands on its own: docs and code never point outside it, every package has a
 * row in docs/dependencies.md, the README stays a short page, and every link between the docs
 * finds its file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/projectRoot.js';

const ROOT = projectRoot();
const tracked = (): string[] =>
  execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file && existsSync(path.join(ROOT, file)))
    .filter((file) => /\.(ts|tsx|js|md|graphql|yml|json)$/.test(file) && !/(^|\/)package-lock\.json$/.test(file))
    .filter((file) => !file.startsWith('bench/results/') && file !== 'test/unit/docs.test.ts');

/** Pointers outside the repository, spelled so that this file does not match itself. */
const OUTSIDE = [
  ['a link to a sibling folder', new RegExp(['\\.\\.', 'shared'].join('/'))],
  ['the design file outside the repository', new RegExp(['DESIGN', 'md'].join('\\.'))],
  ['the product card', new RegExp(['product', 'card'].join(' '), 'i')],
  ['an issue number', new RegExp(['\\bissues?', '#?\\d+\\b'].join(' '), 'i')],
  ['a merge conflict marker', new RegExp(`^(${['<'.repeat(7), '>'.repeat(7), '> > > > > > >'].join('|')})`, 'm')],
] as const;

describe('the repository stands on its own', () => {
  const files = tracked();

  it.each(OUTSIDE)('has no %s', (_what, pattern) => {
    const hits = files.filter((file) => pattern.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(hits).toEqual([]);
  });

  it('has a row in docs/dependencies.md for every package', () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, object>;
    const packages = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})];
    const table = readFileSync(path.join(ROOT, 'docs', 'dependencies.md'), 'utf8');
    const rows = new Set(
      table
        .split('\n')
        .filter((line) => line.startsWith('|'))
        .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1])),
    );
    expect(packages.filter((name) => !rows.has(name))).toEqual([]);
  });

  it('keeps the README short', () => {
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(160);
  });

  it('links only to files that exist', () => {
    const broken = files
      .filter((file) => file.endsWith('.md'))
      .flatMap((file) =>
        [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
          .map((match) => match[1] as string)
          .filter((target) => !/^[a-z]+:/.test(target))
          .filter((target) => !existsSync(path.join(ROOT, path.dirname(file), target)))
          .map((target) => `${file} -> ${target}`),
      );
    expect(broken).toEqual([]);
  });
});
