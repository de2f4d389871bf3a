/**
 * The run's load phase: every system started once, warmed, then each operation × concurrency
 * cell measured with autocannon, the cell's variants taking turns round by round so that each
 * round compares them under the same conditions.
 */
import { runLoadWhenQuiet, warmUp } from './load.js';
import type { LoadResult } from './load.js';
import type { Operation } from './operations.js';
import { backgroundMeter, cpuMs, waitUntilIdle } from './procs.js';
import type { Child } from './procs.js';
import type { RunRow } from './results.js';
import { combineRounds } from './rounds.js';
import type { RunPlan } from './runPlan.js';
import { startSystem, SYSTEMS } from './systems.js';
import type { SystemId, Variant } from './systems.js';

/**
 * Waits until our processes are idle (a run must not inherit the backlog of the previous one:
 * a GraphQL server keeps resolving after autocannon hangs up) and, for up to `quietWaitSeconds`,
 * until the rest of the machine is quiet too (other processes below a quarter of a core).
 */
export async function settle(pids: number[], quietWaitSeconds: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    const before = pids.map(cpuMs);
    const background = backgroundMeter(() => [...pids, process.pid]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const busy = pids.some((pid, i) => (cpuMs(pid) - (before[i] as number)) / 300 > 0.15);
    const quiet = background() < 0.25;
    const waited = Date.now() - started;
    if (!busy && (quiet || waited > quietWaitSeconds * 1000)) return;
    if (waited > Math.max(15_000, quietWaitSeconds * 1000)) return;
  }
}

export interface LoadPhaseOptions {
  plan: RunPlan;
  dynamo: { endpoint: string; pid: number };
  tableName: string;
  headers: Record<string, string>;
  connections: number[];
  rounds: number;
  prewarm: boolean;
  warmupSeconds: number;
  durationSeconds: number;
  quietWaitSeconds: number;
  progress: (message: string) => void;
  onStart: (stop: () => Promise<void>) => void;
}

export interface LoadPhase {
  runs: RunRow[];
  /** The systems, still running: the later phases measure them too. */
  children: Map<SystemId, Child>;
  /** Before a measured run: our processes idle, and the machine quiet if it becomes so soon. */
  settleAll: () => Promise<void>;
}

export async function runLoadPhase(options: LoadPhaseOptions): Promise<LoadPhase> {
  const { plan, dynamo, headers, progress } = options;
  progress('starting the systems under test');
  const children = new Map<SystemId, Child>();
  for (const id of plan.systemIds) {
    const child = await startSystem(SYSTEMS[id], { endpoint: dynamo.endpoint, tableName: options.tableName, headers });
    children.set(id, child);
    options.onStart(() => child.stop());
  }
  for (const child of children.values()) await waitUntilIdle(child.pid);
  const targetOf = (variant: Variant) => {
    const child = children.get(variant.system) as Child;
    return { url: child.url + variant.query, pid: child.pid };
  };
  const allPids = () => [dynamo.pid, ...[...children.values()].map((child) => child.pid)];
  const settleAll = () => settle(allPids(), options.quietWaitSeconds);
  /** After a run: only our processes idle (no backlog carried into the next run). */
  const settleIdle = () => settle(allPids(), 0);

  if (options.prewarm) progress('warming up (JIT, connection pools)');
  for (const variant of options.prewarm ? plan.variants : []) {
    for (const op of plan.ops.filter((o) => plan.applies(variant, o))) {
      await warmUp({
        target: targetOf(variant),
        dbPid: dynamo.pid,
        operationName: op.operationName,
        query: op.query,
        variables: op.variables(plan.opSeed(op) + 500, `warm-${variant.key}`),
        connections: 4,
        seconds: 1,
        headers,
      });
      await settleIdle();
    }
  }

  const runs: RunRow[] = [];
  for (const op of plan.ops) {
    progress(`load: ${op.id} (${op.title})`);
    for (const connections of options.connections) {
      const cell = plan.variants.filter((v) => plan.applies(v, op));
      const measured = await measureCell({ ...options, op, cell, connections, targetOf, settleAll, settleIdle });
      for (const variant of cell) {
        runs.push({ op: op.id, variant: variant.key, ...combineRounds(measured.get(variant.key) ?? []) });
      }
    }
  }
  return { runs, children, settleAll };
}

/** One operation at one concurrency: every variant of the cell, round by round. */
async function measureCell(
  options: Omit<LoadPhaseOptions, 'connections'> & {
    op: Operation;
    cell: Variant[];
    connections: number;
    targetOf: (variant: Variant) => { url: string; pid: number };
    settleAll: () => Promise<void>;
    settleIdle: () => Promise<void>;
  },
): Promise<Map<string, LoadResult[]>> {
  const { op, cell, connections, plan, rounds } = options;
  const spec = (variant: Variant) => ({
    target: options.targetOf(variant),
    dbPid: options.dynamo.pid,
    operationName: op.operationName,
    query: op.query,
    connections,
    headers: options.headers,
  });
  const measured = new Map<string, LoadResult[]>(cell.map((variant) => [variant.key, []]));
  for (let round = 1; round <= rounds; round += 1) {
    for (const variant of cell) {
      if (round === 1) {
        await warmUp({
          ...spec(variant),
          variables: op.variables(plan.opSeed(op) + 100 + connections, `w${connections}-${variant.key}`),
          seconds: options.warmupSeconds,
        });
      }
      await options.settleAll();
      const result = await runLoadWhenQuiet(
        {
          ...spec(variant),
          variables: op.variables(
            plan.opSeed(op) + connections + 10_000 * (round - 1),
            `c${connections}-${variant.key}${round > 1 ? `-r${round}` : ''}`,
          ),
          seconds: options.durationSeconds,
        },
        options.settleAll,
        // Without a wait for a quiet machine (--quiet-wait=0, --quick), no re-run for one either.
        options.quietWaitSeconds > 0 ? undefined : 0,
      );
      await options.settleIdle();
      measured.get(variant.key)?.push(result);
      options.progress(
        `  c=${String(connections).padEnd(3)} ${variant.key.padEnd(11)}${rounds > 1 ? ` r${round}` : ''} ${result.requestsPerSecond.toFixed(0).padStart(5)} req/s  p50 ${result.latencyMs.p50.toFixed(1).padStart(7)} ms  p99 ${result.latencyMs.p99.toFixed(1).padStart(7)} ms  ${result.dynamodb.requests.toFixed(1)} DynamoDB req/op  CPU ${result.cpuMsPerRequest.toFixed(2)} ms/req${result.failures ? `  FAILURES ${result.failures}: ${result.failureSample}` : ''}`,
      );
    }
  }
  return measured;
}
