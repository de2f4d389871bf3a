/**
 * The benchmark's results: what `npm run bench` writes to bench/results/<name>.json and what the
 * report, the ratio table, the targets and docs/performance.md are rendered from.
 */
import type { BenchConfig } from './config.js';
import type { CostRow } from './costPass.js';
import type { SeedReport } from './dataset.js';
import type { ExperimentResults } from './experiments.js';
import type { LoadResult } from './load.js';
import type { RoundValues } from './rounds.js';
import type { ScaleResult } from './scale.js';
import type { TargetRow } from './targets.js';

export interface RunRow extends LoadResult {
  op: string;
  variant: string;
  /** Each round's figures (`--rounds`); the row's own are their medians. Absent in older results. */
  rounds?: RoundValues;
}

export interface BenchResults {
  generatedAt: string;
  totalSeconds: number;
  /** Seconds each phase took: start-up and seeding, cost pass, load, scale, experiments. */
  phases: Record<string, number>;
  environment: { cpus: number; cpuModel: string; memoryGb: number; node: string; platform: string; database: string };
  config: BenchConfig;
  dataset: {
    users: number;
    buyers: number;
    products: number;
    categories: number;
    orders: number;
    scaleOrders: number;
    tableItems: number;
    seeding: SeedReport;
  };
  operations: { id: string; title: string; levels: { requests: number; why: string } }[];
  /** `tablegraph`: served by tablegraph (the server or the server with a lever off). */
  variants: { key: string; label: string; tablegraph?: boolean }[];
  costs: CostRow[];
  runs: RunRow[];
  scale: ScaleResult | undefined;
  experiments: ExperimentResults;
  targets: TargetRow[];
}

/** Keeps latest.json small: 2 decimals are plenty for milliseconds and capacity units. */
function roundNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 100) / 100 : value;
}

/** JSON with the top levels indented and every array element (a run, a cost row...) on one line: small and diff-friendly. */
export function toJson(value: unknown, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((element) => `${inner}${JSON.stringify(element, roundNumbers)}`).join(',\n')}\n${indent}]`;
  }
  if (typeof value === 'object' && value !== null && indent.length < 4) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{\n${entries.map(([key, v]) => `${inner}${JSON.stringify(key)}: ${toJson(v, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value, roundNumbers) ?? 'null';
}
