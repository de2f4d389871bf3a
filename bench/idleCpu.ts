/**
 * `npm run bench:idle-cpu`: why a system's CPU per request is higher at concurrency 1 than at
 * concurrency 16. Each system runs bundled, as the benchmark runs it, under `--trace-gc`; the
 * cells (operation x concurrency) are measured round by round, the systems taking turns, and
 * for each load run it reads, from /proc and the GC trace, per request:
 *
 * - the process's CPU split by thread: the main thread's user and kernel time, V8's worker
 *   threads (concurrent marking, compilation), libuv's pool and the rest;
 * - the main thread's sleeps (voluntary context switches: each is the event loop going idle and
 *   woken again) and preemptions;
 * - minor page faults (memory touched for the first time, or given back and touched again);
 * - garbage collections by kind and reason, and their main-thread time from the trace.
 *
 * Before the load, each system is watched idle: how often its main thread wakes with nothing to
 * serve, and at what CPU. A cost paid per wake-up rather than per request shows as CPU per request that follows the
 * sleeps per request; one paid by GC shows in the trace. A few minutes; needs Java.
 */
import { appendFileSync } from 'node:fs';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { createDynamo } from '../src/db/client.js';
import { startLocalDynamo } from '../src/db/local.js';
import { benchBundle } from './bundle.js';
import { loadBenchConfig } from './config.js';
import { describe, render, renderLayers } from './idleCpuReport.js';
import type { Sample } from './idleCpuReport.js';
import { gcTraceLine, jitTraceLine, readThreads } from './idleCpuStats.js';
import type { GcEvent, ThreadSample } from './idleCpuStats.js';
import { runLoad, warmUp } from './load.js';
import { settle } from './loadPhase.js';
import { startPerf } from './perfSampler.js';
import { setSystemsRuntime, waitUntilIdle } from './procs.js';
import type { Child } from './procs.js';
import { seededTable } from './seededTable.js';
import { startSystem, SYSTEMS } from './systems.js';
import type { SystemId } from './systems.js';

const COMMAND = {
  name: 'bench:idle-cpu',
  run: 'npm run bench:idle-cpu --',
  usage: `[--ops userOrders,nestedPage,categoryPage] [--connections 1,16] [--rounds 3] [--seconds 3]
[--systems server,raw] [--node-args "--flag ..."] [--trace-jit] [--perf] [--warmup 3] [--users 60]

CPU per request by thread, the main thread's sleeps and page faults per request, and garbage
collections by kind and reason, for each system at each concurrency, the systems taking turns
round by round. Medians of the rounds with their range. A few minutes; needs Java (DynamoDB Local).

  --ops <a,b>           operations (bench/operations.ts ids)
  --connections <a,b>   concurrencies (default 1,16)
  --rounds <n>          rounds per cell (default 3)
  --seconds <n>         seconds of load per run (default 3)
  --systems <a,b>       systems (default server,raw)
  --node-args <flags>   extra node flags for every system (e.g. "--single-threaded-gc")
  --trace-jit           also count V8's compilations and deoptimizations (--trace-opt --trace-deopt)
  --perf                also sample each run with perf (cpu-clock, every thread) and print the
                        CPU per request by thread and layer: kernel, V8's GC, compilers, runtime
                        and builtins, the JIT-compiled JavaScript, Node and libuv, libc
  --perf-symbols <n>    with --perf: also the n functions with the most CPU, by thread
  --jit-log <file>      with --trace-jit: write the measured runs' compilations and deoptimizations there
  --warmup <n>          seconds of unmeasured load per operation and system at its first cell (default 3)
  --users <n>           users seeded (default 60)`,
  options: {
    ops: { type: 'string', default: 'userOrders,nestedPage,categoryPage' },
    connections: { type: 'string', default: '1,16' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    systems: { type: 'string', default: 'server,raw' },
    'node-args': { type: 'string', default: '' },
    users: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '3' },
    'trace-jit': { type: 'boolean', default: false },
    perf: { type: 'boolean', default: false },
    'jit-log': { type: 'string', default: '' },
    'perf-symbols': { type: 'string', default: '0' },
  },
} as const;

const { values } = parseCommandLine(COMMAND);
const list = (text: string) => text.split(/[ ,]/).filter((part) => part !== '');
const connections = list(values.connections).map(Number);
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const users = Number(values.users);
const warmupSeconds = Number(values.warmup);
const systems = list(values.systems) as SystemId[];
const topSymbols = Number(values['perf-symbols']);
if (!Number.isInteger(topSymbols) || topSymbols < 0)
  exitWithUsageError(COMMAND, '--perf-symbols must be a whole number');
if (!(warmupSeconds >= 0)) exitWithUsageError(COMMAND, '--warmup must be a number of seconds');
if (![...connections, rounds, seconds, users].every((n) => Number.isInteger(n) && n > 0)) {
  exitWithUsageError(COMMAND, '--connections, --rounds, --seconds and --users must be positive whole numbers');
}
const unknownSystem = systems.find((id) => !(id in SYSTEMS));
if (unknownSystem) exitWithUsageError(COMMAND, `no system "${unknownSystem}" (${Object.keys(SYSTEMS).join(', ')})`);
/** `--jit-log <file>`: the JIT trace lines of the measured runs (which functions keep compiling). */
const jitLog = values['jit-log'] || undefined;
let measuring = false;
const extraNodeArgs = [...list(values['node-args']), ...(values['trace-jit'] ? ['--trace-opt', '--trace-deopt'] : [])];

/** Seconds each system is watched idle before the load. */
const IDLE_SECONDS = 5;

const config = { ...loadBenchConfig([]), users, scaleOrders: 0 };
setSystemsRuntime('bundle');
benchBundle();
const local = await startLocalDynamo();
const admin = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
const children: Child[] = [];
try {
  const { tableName, ops: every, headers } = await seededTable(admin, local.endpoint, config, 'IdleCpu', 'i');
  const ops = every.filter((op) => list(values.ops).includes(op.id));
  if (ops.length === 0) exitWithUsageError(COMMAND, `no operation among "${values.ops}" (bench/operations.ts)`);

  const gcEvents = new Map<SystemId, GcEvent[]>();
  const jitOf = new Map<SystemId, GcEvent[]>(systems.map((system) => [system, []]));
  const started = new Map<SystemId, Child>();
  for (const system of systems) {
    const events: GcEvent[] = [];
    gcEvents.set(system, events);
    const child = await startSystem(SYSTEMS[system], {
      endpoint: local.endpoint,
      tableName,
      headers,
      nodeArgs: ['--trace-gc', ...extraNodeArgs],
      onOutputLine: (line) => {
        const gc = gcTraceLine(line);
        if (gc) events.push(gc);
        const jit = gc ? undefined : jitTraceLine(line);
        if (jit) jitOf.get(system)?.push(jit);
        if (jitLog && measuring && (jit || line.startsWith('[compiling method'))) {
          appendFileSync(jitLog, `${system}\t${line}\n`);
        }
      },
    });
    children.push(child);
    started.set(system, child);
  }
  for (const child of children) await waitUntilIdle(child.pid);
  const pids = [local.pid, ...children.map((child) => child.pid)];

  // Each system idle, before any load: how often its main thread wakes with nothing to serve
  // (a timer of its own), and what that costs.
  const idle: string[] = [];
  for (const system of systems) {
    const child = started.get(system) as Child;
    await settle(pids, config.quietWaitSeconds);
    const before = readThreads(child.pid);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const after = readThreads(child.pid);
    const main = (threads: Map<number, ThreadSample>) => threads.get(child.pid) as ThreadSample;
    let cpu = 0;
    for (const [tid, end] of after) {
      const start = before.get(tid);
      if (start) cpu += end.userMs + end.sysMs - (start.userMs + start.sysMs);
    }
    idle.push(
      `| ${system} | ${((main(after).voluntary - main(before).voluntary) / IDLE_SECONDS).toFixed(1)} | ${(cpu / IDLE_SECONDS).toFixed(1)} |`,
    );
  }

  const samples = new Map<string, Sample[]>();
  for (const op of ops) {
    // The concurrencies take turns round by round too: a process still compiling its hot code
    // would otherwise charge that to whichever concurrency is measured first.
    for (let round = 1; round <= rounds; round += 1) {
      for (const level of connections) {
        // The systems take turns, and which goes first alternates by round.
        const order = round % 2 === 1 ? systems : [...systems].reverse();
        for (const system of order) {
          const child = started.get(system) as Child;
          const spec = {
            target: { url: child.url, pid: child.pid },
            dbPid: local.pid,
            operationName: op.operationName,
            query: op.query,
            connections: level,
            headers,
          };
          if (round === 1 && level === connections[0]) {
            await warmUp({
              ...spec,
              connections: 4,
              variables: op.variables(config.seed + 7, `idle-warm-${system}`),
              seconds: warmupSeconds,
            });
          }
          await settle(pids, config.quietWaitSeconds);
          const events = gcEvents.get(system) as GcEvent[];
          const gcFrom = events.length;
          const jit = jitOf.get(system) as GcEvent[];
          const jitFrom = jit.length;
          measuring = true;
          const sampler = values.perf ? await startPerf(child.pid, topSymbols) : undefined;
          const threadsBefore = readThreads(child.pid);
          const result = await runLoad({
            ...spec,
            variables: op.variables(config.seed + 1000 * round + level, `idle-${system}-c${level}-r${round}`),
            seconds,
          });
          const threadsAfter = readThreads(child.pid);
          measuring = false;
          const sampled = sampler ? await sampler.stop() : { layers: {}, symbols: {} };
          // The trace reaches us through a pipe: let the last lines of the run arrive.
          await new Promise((resolve) => setTimeout(resolve, 100));
          const sample = describe(threadsBefore, threadsAfter, events.slice(gcFrom), child.pid, result.requests);
          const compiled = jit.slice(jitFrom);
          const perRequest = Math.max(result.requests, 1);
          sample.compiles = compiled.filter((e) => e.kind.startsWith('compiled')).length / perRequest;
          sample.compileMs = compiled.reduce((sum, e) => sum + e.ms, 0) / perRequest;
          sample.bailouts = compiled.filter((e) => e.kind.startsWith('bailout')).length / perRequest;
          sample.requestsPerSecond = result.requestsPerSecond;
          const perRequestOf = (totals: Record<string, number>) =>
            Object.fromEntries(Object.entries(totals).map(([key, ms]) => [key, ms / Math.max(result.requests, 1)]));
          sample.layers = perRequestOf(sampled.layers);
          sample.symbols = perRequestOf(sampled.symbols);
          const key = `${op.id}|${level}|${system}`;
          samples.set(key, [...(samples.get(key) ?? []), sample]);
          process.stderr.write(
            `${op.id} c=${level} ${system} r${round}: ${sample.cpuMs.toFixed(2)} ms/req, ${sample.sleeps.toFixed(1)} sleeps/req, ${sample.gcCount.toFixed(3)} GCs/req, ${(sample.compiles * 1000).toFixed(0)} compiles/1000 req\n`,
          );
        }
      }
    }
  }
  process.stdout.write(
    [
      `Idle, ${IDLE_SECONDS} s before any load:`,
      '',
      '| system | main thread wake-ups/s | CPU ms/s |',
      '| --- | ---: | ---: |',
      ...idle,
      '',
      '',
    ].join('\n'),
  );
  process.stdout.write(render(samples));
  if (values.perf) process.stdout.write(`\n${renderLayers(samples, 'layers')}`);
  if (values.perf && topSymbols > 0) process.stdout.write(`\n${renderLayers(samples, 'symbols', topSymbols)}`);
} finally {
  for (const child of children) await child.stop().catch(() => undefined);
  admin.client.destroy();
  await local.stop();
}
