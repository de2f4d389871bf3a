/**
 * tablegraph against the raw SDK chain, cell by cell: the ratios the performance goal is stated
 * in. Only runs of one benchmark run are compared (interleaved on the same machine); latencies of
 * two runs on a shared 2-core machine are not comparable. Pure: bench/results/latest.md and
 * docs/performance.md (scripts/performanceDoc.ts) both render from here.
 */
import { pairedRatio, range } from './rounds.js';
import type { BenchResults } from './results.js';

export interface RatioRow {
  op: string;
  connections: number;
  variant: string;
  label: string;
  p50Ms: number;
  rawP50Ms: number;
  /** With --rounds: the median of the per-round ratios, and their range (else undefined). */
  p50Ratio: number;
  p50RatioRange: [number, number] | undefined;
  p99Ratio: number;
  cpuMsPerRequest: number;
  rawCpuMsPerRequest: number;
  cpuRatio: number;
  cpuRatioRange: [number, number] | undefined;
  /** With --rounds: the range of the cell's p50 and CPU per request over its rounds. */
  p50RangeMs: [number, number] | undefined;
  cpuRangeMs: [number, number] | undefined;
  /** DynamoDB requests per operation, as the responses reported them. */
  requests: number;
  rawRequests: number;
}

/** Goals: p50 at most 1.1x the raw chain's, CPU per request at most 1.25x. */
export const P50_GOAL = 1.1;
export const CPU_GOAL = 1.25;

/** Variants served by tablegraph; older results without the flag know only `server`. */
const tablegraphVariants = (results: BenchResults): { key: string; label: string }[] => {
  const flagged = results.variants.filter((variant) => variant.tablegraph);
  return flagged.length > 0 ? flagged : results.variants.filter((variant) => variant.key === 'server');
};

export function ratioRows(results: BenchResults): RatioRow[] {
  const rows: RatioRow[] = [];
  const variants = tablegraphVariants(results);
  for (const op of results.operations) {
    const connections = [...new Set(results.runs.filter((run) => run.op === op.id).map((run) => run.connections))];
    for (const c of connections.sort((a, b) => a - b)) {
      const raw = results.runs.find((run) => run.op === op.id && run.variant === 'raw' && run.connections === c);
      if (!raw) continue;
      for (const variant of variants) {
        const run = results.runs.find((r) => r.op === op.id && r.variant === variant.key && r.connections === c);
        if (!run) continue;
        const p50 = pairedRatio(run.rounds?.p50Ms, raw.rounds?.p50Ms, run.latencyMs.p50 / raw.latencyMs.p50);
        const p99 = pairedRatio(run.rounds?.p99Ms, raw.rounds?.p99Ms, run.latencyMs.p99 / raw.latencyMs.p99);
        const cpu = pairedRatio(
          run.rounds?.cpuMsPerRequest,
          raw.rounds?.cpuMsPerRequest,
          run.cpuMsPerRequest / raw.cpuMsPerRequest,
        );
        const spread = (values: number[] | undefined) => (values && values.length > 1 ? range(values) : undefined);
        rows.push({
          op: op.id,
          connections: c,
          variant: variant.key,
          label: variant.label,
          p50Ms: run.latencyMs.p50,
          rawP50Ms: raw.latencyMs.p50,
          p50Ratio: p50.median,
          p50RatioRange: p50.range,
          p99Ratio: p99.median,
          cpuMsPerRequest: run.cpuMsPerRequest,
          rawCpuMsPerRequest: raw.cpuMsPerRequest,
          cpuRatio: cpu.median,
          cpuRatioRange: cpu.range,
          p50RangeMs: spread(run.rounds?.p50Ms),
          cpuRangeMs: spread(run.rounds?.cpuMsPerRequest),
          requests: run.dynamodb.requests,
          rawRequests: raw.dynamodb.requests,
        });
      }
    }
  }
  return rows;
}

const f = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const within = (spread: [number, number] | undefined, digits = 2) =>
  spread ? ` [${f(spread[0], digits)}–${f(spread[1], digits)}]` : '';
const mark = (ratio: number, goal: number, spread?: [number, number]) =>
  `${f(ratio)}x${within(spread)}${ratio <= goal ? ' ✅' : ''}`;
const count = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

/**
 * The markdown table of ratioRows: one row per operation, concurrency and tablegraph variant.
 * With --rounds, medians with the range of the rounds in brackets: a cell's p50 and CPU, and
 * the per-round ratios.
 */
export function renderRatioTable(results: BenchResults): string {
  const header = [
    'operation',
    'c',
    'system',
    'p50 ms (raw)',
    `p50 ratio (goal ≤ ${P50_GOAL}x)`,
    'p99 ratio',
    'CPU ms/req (raw)',
    `CPU ratio (goal ≤ ${CPU_GOAL}x)`,
    'DynamoDB req/op (raw)',
  ];
  const rows = ratioRows(results).map((row) => [
    row.op,
    String(row.connections),
    row.label,
    `${f(row.p50Ms, 1)}${within(row.p50RangeMs, 1)} (${f(row.rawP50Ms, 1)})`,
    mark(row.p50Ratio, P50_GOAL, row.p50RatioRange),
    `${f(row.p99Ratio)}x`,
    `${f(row.cpuMsPerRequest)}${within(row.cpuRangeMs)} (${f(row.rawCpuMsPerRequest)})`,
    mark(row.cpuRatio, CPU_GOAL, row.cpuRatioRange),
    `${count(row.requests)} (${count(row.rawRequests)})`,
  ]);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const align = ['---', '--:', '---', '--:', '--:', '--:', '--:', '--:', '--:'];
  return [line(header), line(align), ...rows.map(line)].join('\n');
}
