import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERFORMANCE_DOC, performanceDoc, renderGapTable, replaceGenerated } from '../bench/performanceDoc.js';
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
