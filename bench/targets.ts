/**
 * The benchmark's targets, evaluated on a run's results. Reported, never asserted: timings on a
 * shared 2-core machine are evidence, not a test.
 */
import { CPU_GOAL, P50_GOAL, ratioRows } from './ratios.js';
import type { BenchResults, RunRow } from './results.js';

export interface TargetRow {
  target: string;
  op: string;
  measured: string;
  goal: string;
  pass: boolean;
}

const fmt = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

export function evaluateTargets(results: BenchResults): TargetRow[] {
  const rows: TargetRow[] = [];
  const runsOf = (op: string, variant: string): RunRow[] =>
    results.runs.filter((r) => r.op === op && r.variant === variant);
  const costOf = (op: string, variant: string) => results.costs.find((c) => c.op === op && c.variant === variant);

  for (const op of results.operations) {
    const server = runsOf(op.id, 'server');
    const cost = costOf(op.id, 'server');
    if (server.length === 0 && !cost) continue;
    const observed = [
      ...server.flatMap((r) => [r.dynamodb.requestsMin, r.dynamodb.requestsMax]),
      ...(cost ? [cost.amazon.requests] : []),
    ];
    const most = Math.max(...observed);
    const least = Math.min(...observed);
    const raw = costOf(op.id, 'raw');
    rows.push({
      target: 'DynamoDB requests = one per batched level',
      op: op.id,
      measured: `${least === most ? most : `${least}-${most}`}${raw ? ` (raw chain: ${fmt(raw.amazon.requests, 0)})` : ''}`,
      goal: `${op.levels.requests} (${op.levels.why})`,
      pass: most === op.levels.requests && least === op.levels.requests,
    });
  }

  for (const row of ratioRows(results).filter((r) => r.variant === 'server')) {
    rows.push({
      target: `p50 within ${P50_GOAL}x of the raw chain`,
      op: `${row.op} c=${row.connections}`,
      measured: `${fmt(row.p50Ratio)}x (${fmt(row.p50Ms, 1)} vs ${fmt(row.rawP50Ms, 1)} ms)`,
      goal: `<= ${P50_GOAL.toFixed(2)}x`,
      pass: row.p50Ratio <= P50_GOAL,
    });
  }

  for (const row of ratioRows(results).filter((r) => r.variant === 'server')) {
    rows.push({
      target: `server CPU per request within ${CPU_GOAL}x of the raw chain`,
      op: `${row.op} c=${row.connections}`,
      measured: `${fmt(row.cpuRatio)}x (${fmt(row.cpuMsPerRequest)} vs ${fmt(row.rawCpuMsPerRequest)} ms)`,
      goal: `<= ${CPU_GOAL.toFixed(2)}x`,
      pass: row.cpuRatio <= CPU_GOAL,
    });
  }

  const list = 'userOrders';
  const serverCost = costOf(list, 'server');
  const naiveCost = costOf(list, 'naive');
  if (serverCost && naiveCost) {
    const factor = naiveCost.amazon.requests / serverCost.amazon.requests;
    rows.push({
      target: '>= 10x fewer DynamoDB requests than the naive peer (list query)',
      op: list,
      measured: `${fmt(factor, 1)}x (${fmt(naiveCost.amazon.requests, 1)} vs ${fmt(serverCost.amazon.requests, 0)})`,
      goal: '>= 10x',
      pass: factor >= 10,
    });
  }

  const scale = results.scale;
  if (scale) {
    for (const connections of [...new Set(scale.runs.map((r) => r.connections))]) {
      const first = scale.runs.find((r) => r.page === 'first' && r.connections === connections);
      const deep = scale.runs.find((r) => r.page === 'deep' && r.connections === connections);
      if (!first || !deep) continue;
      rows.push({
        // Page 1 may come with the user in one Query (its item collection); a page after a
        // cursor reads the user beside it: one request more, whatever the depth.
        target: `scale: deep page (after ${scale.depth} of ${scale.orders}) costs what any page after a cursor costs`,
        op: `c=${connections}`,
        measured: `${fmt(deep.dynamodb.requests, 1)} vs ${fmt(first.dynamodb.requests, 1)} for page 1`,
        goal: 'page 1, or page 1 + 1 where page 1 is fused with the user',
        pass:
          deep.dynamodb.requests === first.dynamodb.requests || deep.dynamodb.requests === first.dynamodb.requests + 1,
      });
      const ratio = deep.latencyMs.p50 / first.latencyMs.p50;
      rows.push({
        target: 'scale: deep page p50 within 20% of page 1',
        op: `c=${connections}`,
        measured: `${fmt(ratio)}x (${fmt(deep.latencyMs.p50, 1)} vs ${fmt(first.latencyMs.p50, 1)} ms)`,
        goal: '<= 1.20x',
        pass: ratio <= 1.2,
      });
    }
    // Memory must not grow with depth: after the deep-page runs RSS stays within 10% of what
    // page 1 left (RSS moves with GC and concurrency, not with how deep a page is).
    for (const connections of [...new Set(scale.runs.map((r) => r.connections))]) {
      const first = scale.runs.find((r) => r.page === 'first' && r.connections === connections);
      const deep = scale.runs.find((r) => r.page === 'deep' && r.connections === connections);
      if (!first || !deep) continue;
      const baseline = Math.max(first.rssMb, scale.rssBeforeMb);
      rows.push({
        target: 'scale: server memory does not grow with page depth',
        op: `c=${connections}`,
        measured: `RSS ${fmt(deep.rssMb, 0)} MB after the deep page, ${fmt(first.rssMb, 0)} MB after page 1 (response ${fmt(deep.responseBytes / 1024, 1)} vs ${fmt(first.responseBytes / 1024, 1)} KB)`,
        goal: '<= 1.10x',
        pass: deep.rssMb <= 1.1 * baseline,
      });
    }
  }
  return rows;
}
