/**
 * Benchmark settings: every one can be set by an environment variable (BENCH_*) or a flag
 * (`npm run bench -- --users=500 --scale-orders=100000`). The defaults finish in about ten
 * minutes on 2 cores; `--quick` in under two.
 */
import { UsageError } from '../src/cli.js';

export interface BenchConfig {
  /** Users with orders (each has ordersMin..ordersMax orders, so a page of 20 is always full). */
  users: number;
  ordersMin: number;
  ordersMax: number;
  categories: number;
  productsPerCategory: number;
  /** Users that placeOrder writes to (kept apart so the read operations see a fixed dataset). */
  buyers: number;
  /** Orders in the one big user partition of the scale test (0 skips the scale test). */
  scaleOrders: number;
  /** Only seed and run the scale test (the `--scale` preset, `npm run bench:scale`). */
  scaleOnly: boolean;
  /** Also write the ORDER#id/DETAILS item of every scale order (the scale test reads only the user partition). */
  scaleDetails: boolean;
  /** Concurrent connections of each load run. */
  connections: number[];
  /** Seconds measured per run, after `warmupSeconds` of unmeasured load. */
  durationSeconds: number;
  /**
   * Times each cell is measured, the variants of a cell taking turns (a cell is warmed up once,
   * before its first round); the tables show the median and the range (rounds.ts).
   */
  rounds: number;
  warmupSeconds: number;
  /** Operations to run (ids from operations.ts); empty for all. */
  ops: string[];
  /** Systems to run (server, raw, naive); empty for all. */
  systems: string[];
  /** Requests per operation and system in the cost pass (priced by the recording proxy). */
  costSamples: number;
  /**
   * Before each run, wait up to this long for the machine to be quiet (other processes using
   * less than a quarter of a core): on a shared machine another job skews every figure.
   */
  quietWaitSeconds: number;
  /** Run the extra measurements behind the optimization notes (keep-alive, projection, overhead). */
  experiments: boolean;
  /**
   * Also measure tablegraph with one lever changed (fusion off, graphql-js, development mode),
   * each a server of its own beside the measured one.
   */
  levers: boolean;
  /**
   * Before the first cell, warm every system on every operation (JIT, connection pools); each
   * cell is warmed up for `warmupSeconds` either way.
   */
  prewarm: boolean;
  /**
   * Run the systems under tsx (`node --import tsx <entry>`, as `npm start` runs) instead of
   * bundled by esbuild as deployed (bundle.ts). tsx keeps function names: every closure a request
   * creates costs a `defineProperty`, so its figures are higher than what ships.
   */
  tsx: boolean;
  /** Where the results go, as <resultsName>.md and <resultsName>.json. */
  resultsDir: string;
  resultsName: string;
  seed: number;
}

const DEFAULTS: BenchConfig = {
  users: 200,
  ordersMin: 21,
  ordersMax: 40,
  categories: 10,
  productsPerCategory: 50,
  buyers: 20,
  scaleOrders: 20_000,
  scaleOnly: false,
  scaleDetails: false,
  connections: [1, 4, 16],
  durationSeconds: 2,
  rounds: 1,
  warmupSeconds: 1,
  ops: [],
  systems: [],
  costSamples: 10,
  quietWaitSeconds: 3,
  experiments: true,
  levers: true,
  prewarm: true,
  tsx: false,
  resultsDir: 'bench/results',
  resultsName: 'latest',
  seed: 20260401,
};

/** Flag or variable name for each setting. */
const NAMES: Record<keyof BenchConfig, string> = {
  users: 'users',
  ordersMin: 'orders-min',
  ordersMax: 'orders-max',
  categories: 'categories',
  productsPerCategory: 'products-per-category',
  buyers: 'buyers',
  scaleOrders: 'scale-orders',
  scaleOnly: 'scale-only',
  scaleDetails: 'scale-details',
  connections: 'connections',
  durationSeconds: 'duration',
  rounds: 'rounds',
  warmupSeconds: 'warmup',
  ops: 'ops',
  systems: 'systems',
  costSamples: 'cost-samples',
  quietWaitSeconds: 'quiet-wait',
  experiments: 'experiments',
  levers: 'levers',
  prewarm: 'prewarm',
  tsx: 'tsx',
  resultsDir: 'results-dir',
  resultsName: 'results-name',
  seed: 'seed',
};

const envName = (flag: string) => `BENCH_${flag.toUpperCase().replace(/-/g, '_')}`;

/**
 * `--quick`: a smoke test of the whole run in under two minutes on 2 cores. A small dataset,
 * the three systems (tablegraph, the raw chain, the naive peer) without the lever variants, one
 * concurrency, short cells, no scale test, no experiments, no waiting for a quiet machine; it
 * writes quick.md and quick.json, so the full run's latest.* (the source of docs/performance.md)
 * stays as it was. Its figures show that everything runs and answers, not how fast.
 */
export const QUICK: Partial<BenchConfig> = {
  users: 15,
  productsPerCategory: 10,
  categories: 5,
  buyers: 5,
  scaleOrders: 0,
  connections: [4],
  durationSeconds: 1,
  warmupSeconds: 1,
  costSamples: 2,
  quietWaitSeconds: 0,
  experiments: false,
  levers: false,
  prewarm: false,
  resultsName: 'quick',
};

export function usage(): string {
  const lines = Object.entries(NAMES).map(([key, flag]) => {
    const value = DEFAULTS[key as keyof BenchConfig];
    return `  --${flag}=… (${envName(flag)})  default ${Array.isArray(value) ? value.join(',') || 'all' : String(value)}`;
  });
  return [
    '[flags]',
    '',
    'tablegraph against the raw SDK chain and a naive peer, on its own DynamoDB Local (about 10 minutes',
    'on 2 cores). Writes bench/results/<results-name>.md and .json. Ctrl-C stops it and everything it started.',
    '',
    '  --quick  a smoke test in under 2 minutes on 2 cores: a small dataset, tablegraph, the raw chain',
    '           and the naive peer at concurrency 4, no scale test, no experiments (writes quick.md)',
    '  --scale  only the scale test, on a partition of 100,000 orders (npm run bench:scale)',
    ...lines,
  ].join('\n');
}

export function loadBenchConfig(argv: string[] = process.argv.slice(2), env = process.env): BenchConfig {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new UsageError(`unexpected argument "${arg}"`);
    // `--rounds 5` as well as `--rounds=5`; a flag alone (`--quick`) means true.
    const next = argv[i + 1];
    const spaced = match[2] === undefined && next !== undefined && !next.startsWith('--');
    flags.set(match[1] as string, match[2] ?? (spaced ? next : 'true'));
    if (spaced) i += 1;
  }
  const config: BenchConfig = { ...DEFAULTS };
  if (flags.get('quick') === 'true' || env.BENCH_QUICK === 'true') Object.assign(config, QUICK);
  if (flags.get('scale') === 'true' || env.BENCH_SCALE === 'true') {
    Object.assign(config, { scaleOrders: 100_000, scaleOnly: true, resultsName: 'scale' });
  }
  flags.delete('quick');
  flags.delete('scale');
  const known = new Set(Object.values(NAMES));
  for (const flag of flags.keys()) if (!known.has(flag)) throw new UsageError(`unknown flag --${flag}`);

  for (const [key, flag] of Object.entries(NAMES) as [keyof BenchConfig, string][]) {
    const raw = flags.get(flag) ?? env[envName(flag)];
    if (raw === undefined || raw === '') continue;
    const current = config[key];
    if (Array.isArray(current)) {
      const parts = raw
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean);
      (config as unknown as Record<string, unknown>)[key] =
        key === 'connections' ? parts.map((part) => positiveNumber(flag, part)) : parts;
    } else if (typeof current === 'number') {
      (config as unknown as Record<string, unknown>)[key] =
        key === 'scaleOrders' || key === 'quietWaitSeconds' ? nonNegative(flag, raw) : positiveNumber(flag, raw);
    } else if (typeof current === 'boolean') {
      (config as unknown as Record<string, unknown>)[key] = !['false', '0', 'no'].includes(raw.toLowerCase());
    } else {
      (config as unknown as Record<string, unknown>)[key] = raw;
    }
  }
  if (!Number.isInteger(config.rounds)) throw new UsageError(`--rounds must be a whole number, got ${config.rounds}`);
  if (config.ordersMin < 21) throw new UsageError('--orders-min must be at least 21 (a page of 20 plus one)');
  if (config.ordersMax < config.ordersMin) throw new UsageError('--orders-max must be at least --orders-min');
  if (config.scaleOnly && config.scaleOrders === 0) throw new UsageError('--scale-only needs --scale-orders above 0');
  return config;
}

function positiveNumber(flag: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`--${flag} must be a positive number, got "${raw}"`);
  return value;
}

function nonNegative(flag: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new UsageError(`--${flag} must be a non-negative integer, got "${raw}"`);
  return value;
}
