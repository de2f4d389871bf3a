/**
 * The generated part of docs/performance.md: the ratio table and the request counts of the
 * latest benchmark run, rendered from bench/results/latest.json (never copied by hand).
 * bench/writePerformanceDoc.ts writes it; test/performanceDoc.test.ts fails on drift.
 */
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { projectRoot } from '../src/projectRoot.js';
import { renderRatioTable } from './ratios.js';
import type { BenchResults } from './run.js';

export const PERFORMANCE_DOC = 'docs/performance.md';
export const GENERATED_START =
  '<!-- generated from bench/results/latest.json by `npm run docs:performance`: do not edit -->';
export const GENERATED_END = '<!-- end of generated part -->';

export function renderPerformanceTables(results: BenchResults): string {
  const { config, dataset, environment } = results;
  const label = (key: string) => results.variants.find((v) => v.key === key)?.label ?? key;
  const variantKeys = [...new Set(results.costs.map((cost) => cost.variant))];
  const requests = (op: string, variant: string) => {
    const cost = results.costs.find((c) => c.op === op && c.variant === variant);
    if (!cost) return '–';
    const value = cost.amazon.requests;
    return Number.isInteger(value) ? String(value) : value.toFixed(1);
  };
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    `Run of ${results.generatedAt.slice(0, 16).replace('T', ' ')} UTC: ${environment.cpus} × ${environment.cpuModel}, Node ${environment.node}, ${environment.database}; ` +
      `${dataset.users} users with ${config.ordersMin}-${config.ordersMax} orders, ${dataset.products} products; ` +
      `${config.warmupSeconds} s warm-up and ${config.durationSeconds} s of load per cell, all systems interleaved cell by cell. ` +
      'Full results: [bench/results/latest.md](../bench/results/latest.md).',
    '',
    '### tablegraph against the raw SDK chain',
    '',
    renderRatioTable(results),
    '',
    '### DynamoDB requests per operation',
    '',
    line(['operation', 'fewest by level', ...variantKeys.map(label)]),
    line(['---', '--:', ...variantKeys.map(() => '--:')]),
    ...results.operations.map((op) =>
      line([op.id, String(op.levels.requests), ...variantKeys.map((variant) => requests(op.id, variant))]),
    ),
  ].join('\n');
}

/** `doc` with the text between the markers replaced by `generated`; throws if a marker is missing. */
export function replaceGenerated(doc: string, generated: string): string {
  const start = doc.indexOf(GENERATED_START);
  const end = doc.indexOf(GENERATED_END);
  if (start < 0 || end < start) {
    throw new Error(`${PERFORMANCE_DOC} must hold the lines ${GENERATED_START} and ${GENERATED_END}`);
  }
  return `${doc.slice(0, start + GENERATED_START.length)}\n\n${generated}\n\n${doc.slice(end)}`;
}

/**
 * The page as it must be on disk: `doc` with the generated part replaced, formatted by prettier
 * (as `npm run lint` checks it), so the generator and the lint agree on every byte.
 */
export async function performanceDoc(doc: string, results: BenchResults): Promise<string> {
  const file = path.join(projectRoot(), PERFORMANCE_DOC);
  const options = (await resolveConfig(file)) ?? {};
  return format(replaceGenerated(doc, renderPerformanceTables(results)), { ...options, filepath: file });
}
