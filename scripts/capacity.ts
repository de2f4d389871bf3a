/**
 * `npm run capacity -- userOrders=50 categoryPage=200 placeOrder=5`: turns a traffic mix
 * (operations per second) into the read and write capacity a provisioned table needs, from the
 * per-operation costs the benchmark computed for Amazon DynamoDB (bench/results/latest.json,
 * `npm run bench`; item sizes, not DynamoDB Local's figures). Prints the RCU/WCU at 100%
 * utilisation and what to provision at the auto-scaling target utilisation.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { projectRoot } from '../src/projectRoot.js';

interface CostEntry {
  op: string;
  variant: string;
  amazon: { readUnits: number; writeUnits: number; indexWriteUnits?: number; requests: number };
}

const COMMAND = {
  name: 'capacity',
  run: 'npm run capacity --',
  usage: `<operation>=<per second> ... [--target 70] [--results <file.json>]

Turns a traffic mix into the read and write capacity a provisioned table needs, from the
per-operation costs the benchmark computed for Amazon DynamoDB (npm run bench), e.g.
npm run capacity -- userOrders=50 categoryPage=200 placeOrder=5

  --target <percent>      the auto-scaling target utilisation (default 70)
  --results <file.json>   the benchmark's results (default bench/results/latest.json)`,
  options: {
    results: { type: 'string', default: path.join(projectRoot(), 'bench', 'results', 'latest.json') },
    target: { type: 'string', default: '70' },
  },
  allowPositionals: true,
} as const;

const { values, positionals } = parseCommandLine(COMMAND);
const target = Number(values.target) / 100;
if (!(target > 0 && target <= 1)) exitWithUsageError(COMMAND, `--target must be a percentage above 0 and at most 100`);
if (positionals.length === 0) exitWithUsageError(COMMAND, 'name at least one <operation>=<per second>');
if (!existsSync(values.results)) {
  console.error(`capacity: ${values.results} not found; run npm run bench first`);
  process.exit(1);
}
const costs = (JSON.parse(readFileSync(values.results, 'utf8')) as { costs: CostEntry[] }).costs.filter(
  (entry) => entry.variant === 'server',
);
const known = new Map(costs.map((entry) => [entry.op, entry.amazon]));

let rcu = 0;
let wcu = 0;
const rows: string[] = [];
for (const term of positionals) {
  const [op, rateText] = term.split('=');
  const rate = Number(rateText);
  const cost = op ? known.get(op) : undefined;
  if (!cost || !(rate >= 0)) {
    exitWithUsageError(
      COMMAND,
      `"${term}" is not <operation>=<per second> (operations: ${[...known.keys()].join(', ')})`,
    );
  }
  // Writes to GSI1 cost write units of their own; the benchmark reports them apart.
  const writes = cost.writeUnits + (cost.indexWriteUnits ?? 0);
  rcu += rate * cost.readUnits;
  wcu += rate * writes;
  rows.push(
    `| ${op} | ${rate} | ${cost.requests} | ${cost.readUnits.toFixed(2)} | ${writes.toFixed(2)} | ${(rate * cost.readUnits).toFixed(1)} | ${(rate * writes).toFixed(1)} |`,
  );
}
console.log('| operation | per second | DynamoDB requests | RCU each | WCU each | RCU/s | WCU/s |');
console.log('| --- | --: | --: | --: | --: | --: | --: |');
console.log(rows.join('\n'));
console.log(`\nNeeded: ${rcu.toFixed(1)} RCU and ${wcu.toFixed(1)} WCU per second at 100% utilisation.`);
console.log(
  `Provision (target utilisation ${Math.round(target * 100)}%): ReadCapacity ${Math.ceil(rcu / target)}, WriteCapacity ${Math.ceil(wcu / target)}` +
    ' (the MinReadCapacity/MinWriteCapacity parameters of the stack, docs/deploy.md; auto scaling moves between min and max).',
);
console.log('On demand: the same figures are read/write request units per second.');
