/**
 * `--rounds N`: every cell (operation x concurrency x variant) measured N times, the variants of
 * a cell taking turns round by round, and reported as the median with the range. Pure: the
 * load runs come in, one result per cell goes out.
 */
import type { LoadResult } from './load.js';

/** What each round of a cell measured, in round order: the range a median hides. */
export interface RoundValues {
  p50Ms: number[];
  p99Ms: number[];
  cpuMsPerRequest: number[];
  requestsPerSecond: number[];
}

export const median = (values: readonly number[]): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

export const range = (values: readonly number[]): [number, number] => [Math.min(...values), Math.max(...values)];

/**
 * One result for a cell measured in `results.length` rounds: each timing and rate is the median
 * of the rounds (so one round disturbed by other work on the machine moves it little), counts
 * are summed, DynamoDB requests per operation averaged over every good response with their
 * extremes kept, the outside load is the worst round's. One round comes back as it is, with
 * `rounds` beside it. Throws on no rounds.
 */
export function combineRounds(results: readonly LoadResult[]): LoadResult & { rounds: RoundValues } {
  const first = results[0];
  if (!first) throw new Error('combineRounds needs at least one round');
  const rounds: RoundValues = {
    p50Ms: results.map((r) => r.latencyMs.p50),
    p99Ms: results.map((r) => r.latencyMs.p99),
    cpuMsPerRequest: results.map((r) => r.cpuMsPerRequest),
    requestsPerSecond: results.map((r) => r.requestsPerSecond),
  };
  if (results.length === 1) return { ...first, rounds };
  const mid = (pick: (r: LoadResult) => number) => median(results.map(pick));
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const weighted = (pick: (r: LoadResult) => number) =>
    requests === 0 ? mid(pick) : results.reduce((sum, r) => sum + pick(r) * r.requests, 0) / requests;
  return {
    connections: first.connections,
    seconds: results.reduce((sum, r) => sum + r.seconds, 0),
    requests,
    failures: results.reduce((sum, r) => sum + r.failures, 0),
    failureSample: results.find((r) => r.failureSample !== undefined)?.failureSample,
    requestsPerSecond: mid((r) => r.requestsPerSecond),
    latencyMs: {
      p50: mid((r) => r.latencyMs.p50),
      p95: mid((r) => r.latencyMs.p95),
      p99: mid((r) => r.latencyMs.p99),
      mean: mid((r) => r.latencyMs.mean),
    },
    dynamodb: {
      requests: weighted((r) => r.dynamodb.requests),
      requestsMin: Math.min(...results.map((r) => r.dynamodb.requestsMin)),
      requestsMax: Math.max(...results.map((r) => r.dynamodb.requestsMax)),
      readCapacityUnits: weighted((r) => r.dynamodb.readCapacityUnits),
      writeCapacityUnits: weighted((r) => r.dynamodb.writeCapacityUnits),
    },
    responseBytes: weighted((r) => r.responseBytes),
    cpuMsPerRequest: mid((r) => r.cpuMsPerRequest),
    dbCpuMsPerRequest: mid((r) => r.dbCpuMsPerRequest),
    cpuCores: mid((r) => r.cpuCores),
    rssMb: (results.at(-1) as LoadResult).rssMb,
    peakRssMb: Math.max(...results.map((r) => r.peakRssMb)),
    backgroundCores: Math.max(...results.map((r) => r.backgroundCores)),
    rounds,
  };
}

/**
 * The ratio of a tablegraph cell to the raw chain's cell, round by round (the two ran back to
 * back in each round, so a disturbance of the machine weighs on both): median and range.
 * Without per-round values (one round, or results written before `--rounds`), the ratio of
 * the two figures, with an empty range.
 */
export function pairedRatio(
  server: readonly number[] | undefined,
  raw: readonly number[] | undefined,
  fallback: number,
): { median: number; range: [number, number] | undefined } {
  if (!server || !raw || server.length < 2 || server.length !== raw.length) {
    return { median: fallback, range: undefined };
  }
  const ratios = server.map((value, i) => value / (raw[i] as number));
  return { median: median(ratios), range: range(ratios) };
}
