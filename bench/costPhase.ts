/**
 * The run's cost pass: every system started once behind the recording proxy, and each
 * operation's DynamoDB calls priced per variant (costPass.ts), plus the raw chain's projected
 * plan, which only this pass measures.
 */
import type { CostRow } from './costPass.js';
import { costOf } from './costPass.js';
import { startCostProxy } from './costProxy.js';
import type { Child } from './procs.js';
import type { RunPlan } from './runPlan.js';
import { startSystem, SYSTEMS } from './systems.js';
import type { SystemId, Variant } from './systems.js';

/** Measured in the cost pass only: the raw chain asking for just the attributes shown. */
export const RAW_PROJECTED: Variant = {
  key: 'raw-projected',
  label: 'raw chain, projected',
  system: 'raw',
  query: '?plan=projected',
  ops: ['userOrders'],
};

export async function runCostPhase(options: {
  plan: RunPlan;
  dynamoEndpoint: string;
  tableName: string;
  headers: Record<string, string>;
  samples: number;
  progress: (message: string) => void;
  /** Registers a clean-up for an interrupted run. */
  onStart: (stop: () => Promise<void>) => void;
}): Promise<CostRow[]> {
  const { plan, headers, progress } = options;
  const proxy = await startCostProxy(options.dynamoEndpoint);
  const probes = new Map<SystemId, Child>();
  const costs: CostRow[] = [];
  try {
    for (const id of plan.systemIds) {
      probes.set(
        id,
        await startSystem(SYSTEMS[id], { endpoint: proxy.endpoint, tableName: options.tableName, headers }),
      );
    }
    options.onStart(async () => {
      for (const probe of probes.values()) await probe.stop();
    });
    const variants = [...plan.variants, ...(plan.systemIds.includes('raw') ? [RAW_PROJECTED] : [])];
    for (const op of plan.ops) {
      for (const variant of variants.filter((v) => plan.applies(v, op))) {
        const probe = probes.get(variant.system) as Child;
        const row = await costOf(
          proxy,
          probe.url + variant.query,
          headers,
          op,
          variant.key,
          options.samples,
          plan.opSeed(op),
        );
        costs.push(row);
        progress(
          `  ${op.id.padEnd(13)} ${variant.key.padEnd(13)} ${row.amazon.requests.toFixed(1)} requests, ${row.amazon.readUnits.toFixed(1)} RCU, ${(row.amazon.writeUnits + row.amazon.indexWriteUnits).toFixed(1)} WCU (Amazon model)`,
        );
      }
    }
  } finally {
    for (const probe of probes.values()) await probe.stop();
    probes.clear();
    await proxy.close();
  }
  return costs;
}
