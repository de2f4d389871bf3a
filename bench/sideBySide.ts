/**
 * `npm run bench:side-by-side`: the server's execution of each query of the benchmark beside the
 * raw chain's code for the same data (rawOperations.ts), in one process, on one DynamoDB Local (in
 * memory), through the same DynamoDB client, taking turns round by round. Per request: bytes
 * allocated (heap growth plus what each garbage collection freed, v8.GCProfiler), which load on
 * a shared machine disturbs little, and CPU, with the ratio of each round. What differs between
 * the two is GraphQL alone: no HTTP on either side (the server side is the pipeline's execution
 * step of an admitted operation with a fresh context, as every transport calls it), the same
 * reads, the same conversion of the items.
 *
 *   npm run bench:side-by-side -- --ops userOrders,categoryPage --rounds 5
 */
import { parseCommandLine } from '../src/cli.js';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import { costed, createDynamo } from '../src/db/client.js';
import { CursorCodec } from '../src/db/cursor.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import { baselineNewTable } from '../src/migrations/runner.js';
import { createPipeline } from '../src/pipeline/pipeline.js';
import { TrustedDocuments } from '../src/pipeline/documents/trustedDocuments.js';
import { createMetrics } from '../src/pipeline/report/metrics.js';
import { pino } from 'pino';
import { costExtension, newMeter } from './childSupport.js';
import { loadBenchConfig } from './config.js';
import { buildDataset, seedDataset } from './dataset.js';
import { allocatedBytes } from './heapProfile.js';
import { operations } from './operations.js';
import { rawOperations } from './rawOperations.js';

const { values } = parseCommandLine({
  name: 'bench:side-by-side',
  run: 'npm run bench:side-by-side --',
  usage: `[--ops userOrders,categoryPage] [--rounds 5] [--executions 100]

The server's execution of each query beside the raw chain's code for the same data, in one
process: KB allocated and CPU per request, and the CPU ratio of each round.

  --ops <a,b>        queries (bench/operations.ts ids; default userOrders,categoryPage)
  --rounds <n>       rounds, the two taking turns (default 5)
  --executions <n>   requests per side and round (default 100)`,
  options: {
    ops: { type: 'string', default: 'userOrders,categoryPage' },
    rounds: { type: 'string', default: '5' },
    executions: { type: 'string', default: '100' },
  },
});
const ROUNDS = Math.max(1, Number(values.rounds) || 5);
const EXECUTIONS = Math.max(1, Number(values.executions) || 100);
const wanted = values.ops.split(',').filter((id) => id !== '');

const median = (list: number[]): number => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? NaN;
const spread = (list: number[], digits: number): string =>
  `${median(list).toFixed(digits)} [${Math.min(...list).toFixed(digits)}-${Math.max(...list).toFixed(digits)}]`;

const config = { ...loadBenchConfig([]), users: 40, productsPerCategory: 20, scaleOrders: 0 };
const local = await startLocalDynamo();
const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
try {
  const tableName = `SideBySide-${Date.now().toString(36)}`;
  await ensureTable(dynamo.client, tableName, local.endpoint);
  await baselineNewTable(dynamo.doc, tableName);
  const data = buildDataset(config);
  await seedDataset(dynamo.doc, tableName, data, config, () => undefined);
  const pipeline = createPipeline({
    data: { dynamo, tableName, cursors: new CursorCodec('bench-cursor-secret-of-at-least-thirty-two-chars') },
    log: pino({ level: 'silent' }),
    auth: { secret: 'bench-secret-of-at-least-thirty-two-characters', issuer: 'i', audience: 'a' },
    limits: DEFAULT_LIMITS,
    introspection: false,
    persistedOnly: false,
    documents: new TrustedDocuments(),
    executor: { executor: 'auto', maxDocuments: 1000, maxBytes: 32 * 1024 * 1024 },
    metrics: createMetrics({ process: false }),
  });
  const raw = rawOperations(tableName);
  const viewer = { userId: 'bench-admin', role: 'admin' as const };
  let sequence = 0;
  // Reads only: a write would run twice, with answers of their own ids and instants.
  const ops = operations(data, 'side').filter((op) => !op.mutation && wanted.includes(op.id));
  if (ops.length === 0) throw new Error(`no query among "${values.ops}" (bench/operations.ts)`);
  console.log(
    '| operation | KB/request: tablegraph | raw chain | CPU µs/request: tablegraph | raw chain | CPU ratio by round |',
  );
  console.log('| --- | --: | --: | --: | --: | --: |');
  for (const op of ops) {
    const admitted = await pipeline.admission.admit(
      { query: op.query, operationName: op.operationName, variables: op.variables(6, 'admit')() },
      'ws',
    );
    if (!admitted.ok) throw new Error(`${op.id}: not admitted: ${JSON.stringify(admitted.errors)}`);
    const sides = {
      tablegraph: async (variables: Record<string, unknown>): Promise<void> => {
        const context = pipeline.execution.context(viewer, `side-${(sequence += 1)}`, undefined, false);
        const result = await pipeline.execution.execute({ ...admitted, variables }, context);
        if (result.errors?.length) throw new Error(`${op.id}: ${JSON.stringify(result.errors)}`);
      },
      // As rawChain.ts answers a request: the data, its cost, one JSON text.
      raw: async (variables: Record<string, unknown>): Promise<void> => {
        const meter = newMeter();
        const answer = await raw(costed(dynamo.doc, meter), op.operationName, variables, 'min');
        JSON.stringify({ data: answer, extensions: costExtension(meter) });
      },
    };
    const cells = {
      tablegraph: { kb: [] as number[], cpu: [] as number[] },
      raw: { kb: [] as number[], cpu: [] as number[] },
    };
    // Round -1 warms both up (the JIT, the client's sockets) and is not counted.
    for (let round = -1; round < ROUNDS; round += 1) {
      for (const side of ['tablegraph', 'raw'] as const) {
        const next = op.variables(100 + round, `${side}-${round}`);
        const inputs = Array.from({ length: EXECUTIONS }, () => next());
        const started = process.cpuUsage();
        const bytes = await allocatedBytes(async () => {
          for (const variables of inputs) await sides[side](variables);
        });
        const used = process.cpuUsage(started);
        if (round < 0) continue;
        cells[side].kb.push(bytes / 1024 / EXECUTIONS);
        cells[side].cpu.push((used.user + used.system) / EXECUTIONS);
      }
    }
    const ratios = cells.tablegraph.cpu.map((cpu, i) => cpu / (cells.raw.cpu[i] ?? NaN));
    console.log(
      `| ${op.id} | ${spread(cells.tablegraph.kb, 0)} | ${spread(cells.raw.kb, 0)} | ${spread(cells.tablegraph.cpu, 0)} | ${spread(cells.raw.cpu, 0)} | ${spread(ratios, 2)} |`,
    );
  }
} finally {
  dynamo.client.destroy();
  await local.stop();
}
