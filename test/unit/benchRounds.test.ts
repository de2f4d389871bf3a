import { describe, expect, it } from 'vitest';
import { loadBenchConfig } from '../../bench/config.js';
import type { LoadResult } from '../../bench/load.js';
import { renderRatioTable } from '../../bench/ratios.js';
import { combineRounds, median, pairedRatio } from '../../bench/rounds.js';
import type { BenchResults, RunRow } from '../../bench/results.js';

const aRound = ({
  p50 = 10,
  cpu = 5,
  requests = 100,
  ...overrides
}: Partial<LoadResult> & { p50?: number; cpu?: number } = {}): LoadResult => ({
  connections: 1,
  seconds: 2,
  requests,
  failures: 0,
  failureSample: undefined,
  requestsPerSecond: 50,
  latencyMs: { p50, p95: p50 * 1.5, p99: p50 * 2, mean: p50 },
  dynamodb: { requests: 2, requestsMin: 2, requestsMax: 2, readCapacityUnits: 4, writeCapacityUnits: 0 },
  responseBytes: 5000,
  cpuMsPerRequest: cpu,
  dbCpuMsPerRequest: 1,
  cpuCores: 0.5,
  rssMb: 100,
  peakRssMb: 110,
  backgroundCores: 0,
  ...overrides,
});

describe('--rounds', () => {
  it('is read as --rounds=N and as --rounds N, one round by default', () => {
    expect(loadBenchConfig([], {}).rounds).toBe(1);
    expect(loadBenchConfig(['--rounds=5'], {}).rounds).toBe(5);
    expect(loadBenchConfig(['--quick', '--rounds', '3', '--ops=userOrders'], {})).toMatchObject({
      rounds: 3,
      ops: ['userOrders'],
      durationSeconds: 1,
    });
    expect(() => loadBenchConfig(['--rounds=2.5'], {})).toThrow(/--rounds must be a whole number/);
    expect(() => loadBenchConfig(['--rounds=0'], {})).toThrow(/--rounds must be a positive number/);
  });

  it('takes the median of an odd and of an even number of rounds', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('reports a cell as the median of its rounds, the counts summed and the worst outside load', () => {
    const cell = combineRounds([
      aRound({ p50: 12, cpu: 6, backgroundCores: 0.1 }),
      aRound({ p50: 30, cpu: 9, backgroundCores: 0.9, failures: 1, failureSample: 'HTTP 500' }),
      aRound({ p50: 11, cpu: 5 }),
    ]);
    expect(cell.latencyMs.p50).toBe(12);
    expect(cell.cpuMsPerRequest).toBe(6);
    expect(cell.requests).toBe(300);
    expect(cell.failures).toBe(1);
    expect(cell.failureSample).toBe('HTTP 500');
    expect(cell.backgroundCores).toBe(0.9);
    expect(cell.rounds).toEqual({
      p50Ms: [12, 30, 11],
      p99Ms: [24, 60, 22],
      cpuMsPerRequest: [6, 9, 5],
      requestsPerSecond: [50, 50, 50],
    });
  });

  it('keeps the extremes of the DynamoDB requests per operation over all rounds', () => {
    const cell = combineRounds([
      aRound({
        dynamodb: { requests: 2, requestsMin: 2, requestsMax: 2, readCapacityUnits: 4, writeCapacityUnits: 0 },
      }),
      aRound({
        dynamodb: { requests: 3, requestsMin: 2, requestsMax: 4, readCapacityUnits: 4, writeCapacityUnits: 0 },
      }),
    ]);
    expect(cell.dynamodb).toMatchObject({ requests: 2.5, requestsMin: 2, requestsMax: 4 });
  });

  it('pairs the ratio round by round, and falls back to the ratio of the figures with one round', () => {
    expect(pairedRatio([10, 20, 12], [8, 10, 10], 0)).toEqual({ median: 1.25, range: [1.2, 2] });
    expect(pairedRatio([10], [8], 1.25)).toEqual({ median: 1.25, range: undefined });
    expect(pairedRatio(undefined, undefined, 1.5)).toEqual({ median: 1.5, range: undefined });
  });

  it('puts the range of the rounds beside each median of the ratio table', () => {
    const row = (variant: string, rounds: LoadResult[]): RunRow => ({
      op: 'userOrders',
      variant,
      ...combineRounds(rounds),
    });
    const results = {
      operations: [{ id: 'userOrders' }],
      variants: [
        { key: 'server', label: 'tablegraph', tablegraph: true },
        { key: 'raw', label: 'raw chain (limit)' },
      ],
      runs: [
        row('server', [aRound({ p50: 10.5, cpu: 5 }), aRound({ p50: 20, cpu: 9 }), aRound({ p50: 10, cpu: 4.8 })]),
        row('raw', [aRound({ p50: 10, cpu: 4 }), aRound({ p50: 10, cpu: 4 }), aRound({ p50: 10, cpu: 4 })]),
      ],
    } as unknown as BenchResults;
    const [, , line] = renderRatioTable(results).split('\n');
    expect(line).toBe(
      '| userOrders | 1 | tablegraph | 10.5 [10.0–20.0] (10.0) | 1.05x [1.00–2.00] ✅ | 1.05x | 5.00 [4.80–9.00] (4.00) | 1.25x [1.20–2.25] ✅ | 2 (2) |',
    );
  });
});
