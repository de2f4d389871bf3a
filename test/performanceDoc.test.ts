import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  PERFORMANCE_DOC,
  performanceDoc,
  renderBeforeAfter,
  renderGapTable,
  replaceGenerated,
} from '../bench/performanceDoc.js';
import type { BenchResults } from '../bench/results.js';
import { projectRoot } from '../src/projectRoot.js';

const read = (file: string) => readFileSync(path.join(projectRoot(), file), 'utf8');

describe('docs/performance.md', () => {
  it('holds the tables of bench/results/latest.json (npm run docs:performance regenerates them)', async () => {
    const results = JSON.parse(read('bench/results/latest.json')) as BenchResults;
    const before = JSON.parse(read('bench/results/before.json')) as BenchResults;
    const doc = read(PERFORMANCE_DOC);
    expect(await performanceDoc(doc, results, before)).toBe(doc);
  });

  it('refuses a page without the markers instead of writing the tables somewhere', () => {
    expect(() => replaceGenerated('# Performance\n', 'table')).toThrow(/must hold the lines/);
  });
});

describe('the before-and-after table', () => {
  const before = JSON.parse(read('bench/results/before.json')) as BenchResults;

  it('pairs each cell of the latest run with the same operation and concurrency of the earlier run', () => {
    const userOrders = before.runs.filter((run) => run.op === 'userOrders' && run.variant !== 'raw');
    // The same run on both sides: every ratio equals its counterpart.
    const rows = renderBeforeAfter(before, before)
      .split('\n')
      .filter((row) => row.startsWith('| userOrders'));
    expect(rows.length).toBe(new Set(userOrders.map((run) => run.connections)).size);
    for (const row of rows) {
      const [, , , p50Before, p50After, cpuBefore, cpuAfter] = row.split('|').map((cell) => cell.trim());
      expect(p50Before).toMatch(/^\d+\.\d\dx$/);
      expect(p50After).toBe(p50Before);
      expect(cpuAfter).toBe(cpuBefore);
    }
  });

  it('shows a dash where the earlier run did not measure the cell', () => {
    const earlier = { ...before, runs: before.runs.filter((run) => run.op !== 'categoryPage') };
    const row = renderBeforeAfter(earlier, before)
      .split('\n')
      .find((line) => line.startsWith('| categoryPage'));
    expect(row?.split('|')[3]?.trim()).toBe('–');
    expect(row?.split('|')[4]?.trim()).toMatch(/x$/);
  });
});

describe('the gap table', () => {
  const profiled = (layers: Record<string, [number, number]>) =>
    ({
      operations: [{ id: 'userOrders' }, { id: 'ping' }],
      experiments: {
        profile: {
          operations: [
            { id: 'tablegraph userOrders', requests: 100, msPerRequest: 5 },
            { id: 'raw chain (limit) userOrders', requests: 100, msPerRequest: 3 },
            { id: 'tablegraph ping', requests: 100, msPerRequest: 0.3 },
          ],
          layers: Object.entries(layers).map(([layer, [server, raw]]) => ({
            layer,
            msPerRequest: {
              'tablegraph userOrders': server,
              'raw chain (limit) userOrders': raw,
              'tablegraph ping': 0.1,
            },
          })),
        },
      },
    }) as unknown as BenchResults;

  it('lists each layer tablegraph spends more (or less) in than the raw chain, largest gap first', () => {
    const table = renderGapTable(profiled({ sdk: [1.5, 1.49], graphql: [0.7, 0], gc: [0.8, 0.2], node: [0.9, 1] }));
    const [header, , ...rows] = table.split('\n');
    // ping has no raw-chain column to compare with: no column for it.
    expect(header).toBe('| layer: tablegraph’s extra ms per request | userOrders |');
    expect(rows).toEqual([
      '| graphql | 0.70 |',
      '| gc | 0.60 |',
      '| node | -0.10 |',
      '| **extra, all layers** | **2.00** |',
      '| tablegraph, all layers | 5.00 |',
      '| raw chain, all layers | 3.00 |',
    ]);
  });

  it('is empty without a profile', () => {
    expect(renderGapTable({ operations: [], experiments: { profile: undefined } } as unknown as BenchResults)).toBe('');
  });
});
