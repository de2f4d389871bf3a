/**
 * What one benchmark run measures: the operations, the systems and their variants (the
 * `--ops` and `--systems` flags applied), and the seed of each operation's variables.
 */
import { UsageError } from '../src/cli.js';
import type { BenchConfig } from './config.js';
import type { Dataset } from './dataset.js';
import { operations } from './operations.js';
import type { Operation } from './operations.js';
import { SYSTEMS, VARIANTS } from './systems.js';
import type { SystemId, Variant } from './systems.js';

export interface RunPlan {
  ops: Operation[];
  systemIds: SystemId[];
  variants: Variant[];
  /** Whether `variant` is measured on `op`. */
  applies(variant: Variant, op: Operation): boolean;
  /** The seed of `op`'s variables streams: every system gets the same sequence. */
  opSeed(op: Operation): number;
}

export function planRun(config: BenchConfig, data: Dataset, runId: string): RunPlan {
  const allOps = operations(data, runId);
  const unknownOp = config.ops.find((id) => !allOps.some((op) => op.id === id));
  if (unknownOp) throw new UsageError(`unknown operation ${unknownOp}: one of ${allOps.map((op) => op.id).join(', ')}`);
  const ops = config.scaleOnly ? [] : allOps.filter((op) => config.ops.length === 0 || config.ops.includes(op.id));
  const chosen = (id: SystemId) =>
    config.systems.includes(id) || (SYSTEMS[id].tablegraph === true && config.systems.includes('server'));
  // Without the levers, tablegraph runs once: as deployed.
  const lever = (id: SystemId) => SYSTEMS[id].tablegraph === true && id !== 'server';
  const systemIds = (Object.keys(SYSTEMS) as SystemId[]).filter((id) =>
    config.scaleOnly ? id === 'server' : (config.systems.length === 0 || chosen(id)) && (config.levers || !lever(id)),
  );
  return {
    ops,
    systemIds,
    // The raw chain's second plan shows what fusion is worth: a lever too.
    variants: VARIANTS.filter(
      (variant) => systemIds.includes(variant.system) && (config.levers || variant.key !== 'raw-levels'),
    ),
    applies: (variant, op) => !variant.ops || variant.ops.includes(op.id),
    opSeed: (op) => config.seed + 1000 * (ops.indexOf(op) + 1),
  };
}
