/**
 * The generated part of docs/performance.md: the ratio table and the request counts of the
 * latest benchmark run, rendered from bench/results/latest.json (never copied by hand).
 * bench/writePerformanceDoc.ts writes it; test/performanceDoc.test.ts fails on drift.
 */
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { projectRoot } from '../src/projectRoot.js';
import { ratioRows, renderRatioTable } from './ratios.js';
import type { BenchResults } from './results.js';

export const PERFORMANCE_DOC = 'docs/performance.md';
export const GENERATED_START =
  '<!-- generated from bench/results/latest.json by `npm run docs:performance`: do not edit -->';
export const GENERATED_END = '<!-- end of generated part -->';

/**
 * Where tablegraph's CPU goes beyond the raw chain's, layer by layer, for each operation the
 * profiler ran on both (self time per request at concurrency 1): the gap the ratio table shows,
 * tied to the code that spends it. Empty when the run had no profile.
 */
export function renderGapTable(results: BenchResults): string {
  const profile = results.experiments.profile;
  if (!profile) return '';
  const column = (prefix: string, op: string) =>
    profile.operations.find((o) => o.id.startsWith(prefix) && o.id.endsWith(` ${op}`))?.id;
  const pairs = results.operations
    .map((op) => ({ op: op.id, server: column('tablegraph ', op.id), raw: column('raw chain', op.id) }))
    .filter((pair): pair is { op: string; server: string; raw: string } => !!pair.server && !!pair.raw);
  if (pairs.length === 0) return '';
  const ms = (value: number) => value.toFixed(2);
  const extra = (row: (typeof profile.layers)[number], pair: (typeof pairs)[number]) =>
    (row.msPerRequest[pair.server] ?? 0) - (row.msPerRequest[pair.raw] ?? 0);
  // The layers where the two differ by at least 0.02 ms in some operation, largest gap first.
  const layers = profile.layers
    .filter((row) => pairs.some((pair) => Math.abs(extra(row, pair)) >= 0.02))
    .sort((a, b) => pairs.reduce((sum, p) => sum + extra(b, p) - extra(a, p), 0));
  const total = (id: string) => profile.operations.find((o) => o.id === id)?.msPerRequest ?? 0;
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(['layer: tablegraph’s extra ms per request', ...pairs.map(({ op }) => op)]),
    line(['---', ...pairs.map(() => '--:')]),
    ...layers.map((row) => line([row.layer, ...pairs.map((pair) => ms(extra(row, pair)))])),
    line(['**extra, all layers**', ...pairs.map(({ server, raw }) => `**${ms(total(server) - total(raw))}**`)]),
    line(['tablegraph, all layers', ...pairs.map(({ server }) => ms(total(server)))]),
    line(['raw chain, all layers', ...pairs.map(({ raw }) => ms(total(raw)))]),
  ].join('\n');
}

/**
 * The server's ratios to the raw chain in an earlier run (bench/results/before.json, the run
 * before the HTTP layer and the executor changed) beside the latest run's, cell by cell. Each
 * ratio is from its own run; absolute times of two runs are not compared.
 */
export function renderBeforeAfter(before: BenchResults, after: BenchResults): string {
  const server = (results: BenchResults) => ratioRows(results).filter((row) => row.variant === 'server');
  const earlier = server(before);
  const x = (value: number | undefined) =>
    value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(2)}x`;
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    `Before: the run of ${before.generatedAt.slice(0, 16).replace('T', ' ')} UTC (bench/results/before.json). After: the run above.`,
    '',
    line(['operation', 'c', 'p50 ratio before', 'p50 ratio after', 'CPU ratio before', 'CPU ratio after']),
    line(['---', '--:', '--:', '--:', '--:', '--:']),
    ...server(after).map((row) => {
      const old = earlier.find((e) => e.op === row.op && e.connections === row.connections);
      return line([
        row.op,
        String(row.connections),
        x(old?.p50Ratio),
        x(row.p50Ratio),
        x(old?.cpuRatio),
        x(row.cpuRatio),
      ]);
    }),
  ].join('\n');
}

export function renderPerformanceTables(results: BenchResults, before?: BenchResults): string {
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
  const gaps = renderGapTable(results);
  return [
    `Run of ${results.generatedAt.slice(0, 16).replace('T', ' ')} UTC: ${environment.cpus} × ${environment.cpuModel}, Node ${environment.node}, ${environment.database}; ` +
      `${dataset.users} users with ${config.ordersMin}-${config.ordersMax} orders, ${dataset.products} products; ` +
      `${config.warmupSeconds} s warm-up and ${(config.rounds ?? 1) > 1 ? `${config.rounds} rounds of ` : ''}${config.durationSeconds} s of load per cell, all systems interleaved cell by cell` +
      ((config.rounds ?? 1) > 1
        ? ' (round by round: a figure is the median of the rounds, [min–max] their range, a ratio the median of the per-round ratios). '
        : '. ') +
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
    ...(before ? ['', '### Before and after', '', renderBeforeAfter(before, results)] : []),
    ...(gaps
      ? [
          '',
          '### Where the extra CPU goes',
          '',
          'What tablegraph spends per request beyond the raw chain, making the same DynamoDB requests, by layer: ' +
            'self time from V8’s sampling profiler at concurrency 1, in milliseconds (the profiler adds a little to both; ' +
            'layers that differ by 0.02 ms or more, largest gap first; the full profile is in latest.md):',
          '',
          gaps,
        ]
      : []),
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
export async function performanceDoc(doc: string, results: BenchResults, before?: BenchResults): Promise<string> {
  const file = path.join(projectRoot(), PERFORMANCE_DOC);
  const options = (await resolveConfig(file)) ?? {};
  return format(replaceGenerated(doc, renderPerformanceTables(results, before)), { ...options, filepath: file });
}
