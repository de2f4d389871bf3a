import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERFORMANCE_DOC, performanceDoc, replaceGenerated } from '../bench/performanceDoc.js';
import type { BenchResults } from '../bench/run.js';
import { projectRoot } from '../src/projectRoot.js';

const read = (file: string) => readFileSync(path.join(projectRoot(), file), 'utf8');

describe('docs/performance.md', () => {
  it('holds the tables of bench/results/latest.json (npm run docs:performance regenerates them)', async () => {
    const results = JSON.parse(read('bench/results/latest.json')) as BenchResults;
    const doc = read(PERFORMANCE_DOC);
    expect(await performanceDoc(doc, results)).toBe(doc);
  });

  it('refuses a page without the markers instead of writing the tables somewhere', () => {
    expect(() => replaceGenerated('# Performance\n', 'table')).toThrow(/must hold the lines/);
  });
});
