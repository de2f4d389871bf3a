/**
 * `npm run bench:executors`: the executors compared in one process, on the benchmark's
 * operations, by what load on a shared machine disturbs least: CPU time, bytes allocated and
 * promises created per execution, beside the DynamoDB requests and the median latency.
 *
 * DynamoDB Local (in memory) holds a small generated shop; one pipeline per executor
 * (EXECUTOR's `graphql-js` and `auto`, and `compiled`: graphql-jit, brought by the benchmark
 * through the pipeline's executor option, bench/jitExecutor.ts) executes each operation through the pipeline's
 * execution step (what every transport calls: fresh context, loaders and cost record, the meter),
 * the executors taking turns round by round. Per execution:
 * - CPU: process.cpuUsage() over a round, divided by its executions (DynamoDB Local runs in its
 *   own process; the SDK's work here is the same for every executor);
 * - allocation: the heap's growth over a round plus what each garbage collection in it freed
 *   (v8.GCProfiler), divided by its executions;
 * - promises: async_hooks' PROMISE inits during one execution, in a pass of their own (the hook
 *   slows everything down): all of them, and those created outside the context's DynamoDB client
 *   (its cost accounting and the SDK beneath: a promise created while a call is being sent, or in
 *   a continuation of one that was, is the client's);
 * - fall-backs: the executions each executor left to graphql-js (graphql_executor_fallbacks_total),
 *   per execution, by class;
 * - the answers of the executors are compared (data as JSON, errors) on each operation's first
 *   variables.
 *
 * - with --heap-profile, where the bytes go: one more pass per operation and executor under V8's
 *   sampling heap profiler (heapProfile.ts), KB per execution by layer and the largest functions.
 *
 * Flags: --help. Run with NODE_ENV=production (the npm script does): graphql-js checks
 * NODE_ENV once, when it loads.
 */
import { createHook, executionAsyncId } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ExecutionResult } from 'graphql';
import { pino } from 'pino';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import { createDynamo } from '../src/db/client.js';
import { CursorCodec } from '../src/db/cursor.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import { baselineNewTable } from '../src/migrations/runner.js';
import type { AdmittedOperation } from '../src/pipeline/admission/admission.js';
import { createPipeline } from '../src/pipeline/pipeline.js';
import { createMetrics } from '../src/pipeline/report/metrics.js';
import type { Pipeline } from '../src/pipeline/pipeline.js';
import { TrustedDocuments } from '../src/pipeline/documents/trustedDocuments.js';
import { loadBenchConfig } from './config.js';
import { allocatedBytes, heapShares } from './heapProfile.js';
import { buildDataset, seedDataset } from './dataset.js';
import { jitExecutor } from './jitExecutor.js';
import { operations } from './operations.js';
import type { Operation } from './operations.js';

type ExecutorName = 'graphql-js' | 'compiled' | 'auto';

const EXECUTORS: readonly ExecutorName[] = ['graphql-js', 'compiled', 'auto'];

/** The command line (src/cli.ts): --help, and a one-line error for a flag it does not take. */
function flags() {
  const command = {
    name: 'bench:executors',
    run: 'npm run bench:executors --',
    usage: `[--users 40] [--rounds 5] [--executions 100] [--ops a,b] [--executors a,b] [--heap-profile]

The executors compared in one process on the benchmark's operations: CPU, bytes allocated and
promises per execution, DynamoDB requests and the median latency.

  --users <n>        users of the generated shop (default 40)
  --rounds <n>       rounds per operation, the executors taking turns (default 5)
  --executions <n>   executions per executor and round (default 100)
  --ops <a,b>        only these operations (bench/operations.ts ids)
  --executors <a,b>  only these executors (default graphql-js,compiled,auto)
  --heap-profile     also where each execution's bytes go, by layer and function (sampled)`,
    options: {
      users: { type: 'string', default: '40' },
      rounds: { type: 'string', default: '5' },
      executions: { type: 'string', default: '100' },
      ops: { type: 'string', default: '' },
      executors: { type: 'string', default: 'graphql-js,compiled,auto' },
      'heap-profile': { type: 'boolean', default: false },
    },
  } as const;
  const { values } = parseCommandLine(command);
  const count = (name: 'users' | 'rounds' | 'executions'): number => {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < 1) exitWithUsageError(command, `--${name} takes a positive integer`);
    return value;
  };
  const list = (text: string) => text.split(',').filter(Boolean);
  const executors = list(values.executors);
  const unknown = executors.find((name) => !(EXECUTORS as readonly string[]).includes(name));
  if (unknown) exitWithUsageError(command, `unknown executor ${unknown} (${EXECUTORS.join(', ')})`);
  return {
    users: count('users'),
    rounds: count('rounds'),
    executions: count('executions'),
    ops: list(values.ops),
    executors: executors as ExecutorName[],
    heapProfile: values['heap-profile'],
  };
}

/** The fall-backs of a cell per execution, by class ("0" for none). */
const fallbacksText = ({ fallbacks, executions }: Cell): string =>
  fallbacks.size === 0
    ? '0'
    : [...fallbacks].map(([name, count]) => `${(count / executions).toFixed(2)} ${name}`).join(', ');

const progress = (message: string) => process.stderr.write(`${message}\n`);
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

// --- promises: async_hooks, with the DynamoDB client's own marked -------------------------------
let counting = false;
let sending = 0;
let promises = 0;
let ourPromises = 0;
const clientIds = new Set<number>();
const hook = createHook({
  init(asyncId, type) {
    if (!counting) return;
    if (sending > 0 || clientIds.has(executionAsyncId())) {
      clientIds.add(asyncId);
      if (type === 'PROMISE') promises += 1;
      return;
    }
    if (type !== 'PROMISE') return;
    promises += 1;
    ourPromises += 1;
    if (process.env.BENCH_PROMISE_STACKS)
      process.stderr.write(`${new Error('promise').stack?.split('\n').slice(2, 9).join('\n')}\n---\n`);
  },
});

/** The context's client, with everything it creates while sending marked as the client's. */
function marked(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const send = (command: object, options?: object): Promise<unknown> => {
    sending += 1;
    try {
      return doc.send(command as never, options as never);
    } finally {
      sending -= 1;
    }
  };
  return Object.create(doc, { send: { value: send } }) as DynamoDBDocumentClient;
}

/**
 * The promises `run` creates, all and outside the DynamoDB client, less what this harness adds
 * around it (measured on a run that only returns a resolved promise: that promise and the
 * harness's own).
 */
async function countPromises<T>(run: () => Promise<T>): Promise<{ value: T; promises: number; ours: number }> {
  const count = async <U>(task: () => Promise<U>) => {
    promises = 0;
    ourPromises = 0;
    clientIds.clear();
    hook.enable();
    counting = true;
    const value = await task();
    counting = false;
    hook.disable();
    return { value, promises, ours: ourPromises };
  };
  const harness = await count(() => Promise.resolve());
  const counted = await count(run);
  // The harness's own, less the one promise its empty run created.
  const own = harness.ours - 1;
  return { value: counted.value, promises: counted.promises - own, ours: counted.ours - own };
}

// --- allocation: the heap's growth plus what every collection freed ------------------------------
interface Cell {
  cpuUs: number[];
  allocatedKb: number[];
  p50Ms: number[];
  promises: number;
  ourPromises: number;
  requests: number;
  /** Executions left to graphql-js, by class, over every execution of the cell. */
  fallbacks: Map<string, number>;
  executions: number;
}

async function main(): Promise<void> {
  const options = flags();
  if (process.env.NODE_ENV !== 'production')
    progress('note: NODE_ENV is not production (graphql-js runs its development checks)');
  const config = { ...loadBenchConfig([]), users: options.users, productsPerCategory: 20, scaleOrders: 0 };
  progress('starting DynamoDB Local (in memory)');
  const local = await startLocalDynamo();
  const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
  try {
    const tableName = `Executors-${Date.now().toString(36)}`;
    await ensureTable(dynamo.client, tableName, local.endpoint);
    await baselineNewTable(dynamo.doc, tableName);
    const data = buildDataset(config);
    progress('seeding');
    await seedDataset(dynamo.doc, tableName, data, config, progress);
    const log = pino({ level: 'silent' });
    const pipelines = new Map<ExecutorName, Pipeline>();
    const metricsOf = new Map<ExecutorName, ReturnType<typeof createMetrics>>();
    /** The fall-backs counted so far by `executor`'s pipeline, by class. */
    const fallbacksOf = async (executor: ExecutorName): Promise<Map<string, number>> => {
      const counted = await (metricsOf.get(executor) as ReturnType<typeof createMetrics>).executorFallbacks.get();
      return new Map(counted.values.map(({ labels, value }) => [String(labels.class), value]));
    };
    for (const executor of options.executors) {
      const metrics = createMetrics({ process: false });
      metricsOf.set(executor, metrics);
      pipelines.set(
        executor,
        createPipeline({
          data: { dynamo, tableName, cursors: new CursorCodec('bench-cursor-secret-of-at-least-thirty-two-chars') },
          log,
          auth: { secret: 'bench-secret-of-at-least-thirty-two-characters', issuer: 'i', audience: 'a' },
          limits: DEFAULT_LIMITS,
          introspection: false,
          persistedOnly: false,
          documents: new TrustedDocuments(),
          executor: {
            executor: executor === 'compiled' ? 'graphql-js' : executor,
            maxDocuments: 1000,
            maxBytes: 32 * 1024 * 1024,
          },
          execute: executor === 'compiled' ? jitExecutor() : undefined,
          metrics,
        }),
      );
    }
    const viewer = { userId: 'bench-admin', role: 'admin' as const };
    const ops = operations(data, 'x').filter((op) => options.ops.length === 0 || options.ops.includes(op.id));
    let sequence = 0;

    /**
     * A fresh context, as the request core gives each execution of a signed-in request with the
     * response cache off (the benchmark's): its reads are not recorded as dependency tags
     * (BENCH_RECORD_READS=1 records them, as for an answer that may be stored or public).
     */
    const recordReads = process.env.BENCH_RECORD_READS === '1';
    const contextOf = (pipeline: Pipeline) =>
      pipeline.execution.context(viewer, `bench-${(sequence += 1)}`, undefined, recordReads);
    /** The operation as admission hands it to execution, once per pipeline; each execution brings its variables. */
    const admit = async (pipeline: Pipeline, op: Operation): Promise<AdmittedOperation> => {
      const admitted = await pipeline.admission.admit(
        { query: op.query, operationName: op.operationName, variables: op.variables(6, 'admit')() },
        'ws',
      );
      if (!admitted.ok) throw new Error(`${op.id}: not admitted: ${JSON.stringify(admitted.errors)}`);
      return admitted;
    };
    const checked = (op: Operation, result: ExecutionResult): ExecutionResult => {
      if (result.errors?.length) throw new Error(`${op.id}: ${JSON.stringify(result.errors)}`);
      return result;
    };
    const executeOnce = async (
      pipeline: Pipeline,
      op: Operation,
      admitted: AdmittedOperation,
      variables: Record<string, unknown>,
    ): Promise<ExecutionResult> =>
      checked(op, await pipeline.execution.execute({ ...admitted, variables }, contextOf(pipeline)));

    const table: { op: string; executor: ExecutorName; cell: Cell }[] = [];
    const profiles: string[] = [];
    for (const op of ops) {
      // Admitted once per pipeline, as admission hands execution the same document each time.
      const admitted = new Map<ExecutorName, AdmittedOperation>();
      for (const [executor, pipeline] of pipelines) admitted.set(executor, await admit(pipeline, op));
      const cells = new Map<ExecutorName, Cell>();
      const fallbacksBefore = new Map<ExecutorName, Map<string, number>>();
      for (const executor of pipelines.keys()) fallbacksBefore.set(executor, await fallbacksOf(executor));
      // The same answers first (reads only: a write's answer holds its own ids and instant).
      const answers = new Map<ExecutorName, string>();
      for (const [executor, pipeline] of pipelines) {
        const operation = admitted.get(executor) as AdmittedOperation;
        const variables = op.variables(7, `check-${executor}`)();
        const result = await executeOnce(pipeline, op, operation, variables);
        answers.set(executor, JSON.stringify(result.data));
        // Promises of one warm execution, counted.
        await executeOnce(pipeline, op, operation, op.variables(8, `warm-${executor}`)());
        const measured = { ...operation, variables: op.variables(9, `count-${executor}`)() };
        const context = contextOf(pipeline);
        context.data.dynamo.doc = marked(context.data.dynamo.doc);
        const counted = await countPromises(() => pipeline.execution.execute(measured, context));
        checked(op, counted.value);
        cells.set(executor, {
          cpuUs: [],
          allocatedKb: [],
          p50Ms: [],
          promises: counted.promises,
          ourPromises: counted.ours,
          requests: context.cost.requests,
          fallbacks: new Map(),
          executions: 3,
        });
      }
      if (!op.mutation && new Set(answers.values()).size > 1) {
        throw new Error(`${op.id}: the executors answered differently:\n${[...answers].join('\n')}`);
      }
      for (let round = 0; round < options.rounds; round += 1) {
        for (const [executor, pipeline] of pipelines) {
          const next = op.variables(100 + round, `r${round}-${executor}`);
          const inputs = Array.from({ length: options.executions }, () => next());
          const latencies: number[] = [];
          const cpuBefore = process.cpuUsage();
          const bytes = await allocatedBytes(async () => {
            for (const variables of inputs) {
              const started = performance.now();
              await executeOnce(pipeline, op, admitted.get(executor) as AdmittedOperation, variables);
              latencies.push(performance.now() - started);
            }
          });
          const cpu = process.cpuUsage(cpuBefore);
          const cell = cells.get(executor) as Cell;
          cell.cpuUs.push((cpu.user + cpu.system) / options.executions);
          cell.allocatedKb.push(bytes / 1024 / options.executions);
          cell.p50Ms.push(median(latencies));
          cell.executions += options.executions;
        }
      }
      for (const [executor, cell] of cells) {
        const before = fallbacksBefore.get(executor) as Map<string, number>;
        for (const [name, value] of await fallbacksOf(executor)) {
          const added = value - (before.get(name) ?? 0);
          if (added > 0) cell.fallbacks.set(name, added);
        }
      }
      for (const [executor, cell] of cells) table.push({ op: op.id, executor, cell });
      if (options.heapProfile) {
        for (const [executor, pipeline] of pipelines) {
          const next = op.variables(1000, `profile-${executor}`);
          const inputs = Array.from({ length: options.executions }, () => next());
          const shares = await heapShares(async () => {
            for (const variables of inputs)
              await executeOnce(pipeline, op, admitted.get(executor) as AdmittedOperation, variables);
          }, options.executions);
          const rows = (entries: [string, number][], count: number) =>
            entries.slice(0, count).map(([name, kb]) => `| ${name} | ${kb.toFixed(1)} |`);
          profiles.push(
            `\n${op.id}, ${executor}: sampled KB per execution by layer, then the largest functions\n`,
            '| layer | KB |\n| --- | --: |',
            ...rows(shares.layers, 12),
            '\n| function | KB |\n| --- | --: |',
            ...rows(shares.functions, 15),
          );
        }
      }
      progress(`${op.id} done`);
    }

    const lines = [
      `| operation | executor | CPU µs/exec (median [min–max] of ${options.rounds} rounds) | allocated KB/exec | p50 ms | promises/exec (all) | promises/exec outside the DynamoDB client | DynamoDB requests | fall-backs/exec |`,
      '| --- | --- | --: | --: | --: | --: | --: | --: | --- |',
    ];
    for (const { op, executor, cell } of table) {
      const range = (values: number[], digits: number) =>
        `${median(values).toFixed(digits)} [${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}]`;
      lines.push(
        `| ${op} | ${executor} | ${range(cell.cpuUs, 0)} | ${range(cell.allocatedKb, 1)} | ${median(cell.p50Ms).toFixed(2)} | ${cell.promises} | ${cell.ourPromises} | ${cell.requests} | ${fallbacksText(cell)} |`,
      );
    }
    process.stdout.write(`${[...lines, ...profiles].join('\n')}\n`);
  } finally {
    dynamo.client.destroy();
    await local.stop();
  }
}

await main();
