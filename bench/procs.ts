/**
 * The systems under test run as child processes, as they are deployed: `node <bundle>.mjs` in the
 * benchmark's bundle folder (bundle.ts), or `node --import tsx <entry>` in the project folder when
 * a run asks for tsx (`--tsx`). The benchmark only talks HTTP to them and reads their memory and
 * CPU from /proc.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ENV_SPEC } from '../src/config/index.js';
import { benchBundle } from './bundle.js';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every setting of the spec would change what a child does: a child gets only what its system gives it. */
const DROPPED = Object.keys(ENV_SPEC);

/** How the systems run: bundled by esbuild as deployed (the default), or under tsx as `npm start` runs. */
export type SystemsRuntime = 'bundle' | 'tsx';

let runtime: SystemsRuntime = 'bundle';

/** Sets how the children started from now on run (`npm run bench -- --tsx`). */
export function setSystemsRuntime(value: SystemsRuntime): void {
  runtime = value;
}

/** The command line and working directory of `entry` (relative to the project root) in the current runtime. */
export function childCommand(entry: string): { args: string[]; cwd: string } {
  if (runtime === 'tsx') return { args: ['--import', 'tsx', entry], cwd: PROJECT_ROOT };
  const bundle = benchBundle();
  return { args: [bundle.file(entry)], cwd: bundle.dir };
}

export interface Child {
  name: string;
  pid: number;
  url: string;
  process: ChildProcess;
  stderr(): string;
  /** JSON log lines at warn level or above. */
  warnings(): string[];
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  entry: string;
  /** Arguments after the entry. */
  args?: string[];
  env: Record<string, string>;
  port: number;
  /** Sent with the readiness probe. */
  headers: Record<string, string>;
  /** A log line whose msg starts with this means ready. */
  readyMessage: string;
  timeoutMs?: number;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** Every line the child writes to stdout that is not a JSON log line (e.g. `--trace-gc`'s). */
  onOutputLine?: (line: string) => void;
}

/**
 * Starts the child and resolves once it is ready: either its ready log line appeared or a
 * GraphQL request `{ __typename }` answered 200 (the server logs "ready" at info level, which
 * LOG_LEVEL=warn hides).
 */
export async function startChild({
  name,
  entry,
  args = [],
  env,
  port,
  headers,
  readyMessage,
  timeoutMs = 60_000,
  nodeArgs = [],
  onOutputLine,
}: StartOptions): Promise<Child> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const variable of DROPPED) delete base[variable];
  for (const variable of Object.keys(base)) if (/^(BENCH_|NAIVE_)/.test(variable)) delete base[variable];
  // e.g. BENCH_CHILD_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the systems under test.
  const extraArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const command = childCommand(entry);
  const child = spawn(process.execPath, [...extraArgs, ...nodeArgs, ...command.args, ...args], {
    cwd: command.cwd,
    env: { ...base, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let partial = '';
  const warnings: string[] = [];
  let sawReady = false;
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const parsed = JSON.parse(line) as { level?: number; msg?: string };
        if (typeof parsed.msg === 'string' && parsed.msg.startsWith(readyMessage)) sawReady = true;
        if ((parsed.level ?? 0) >= 40 && warnings.length < 50) warnings.push(line.slice(0, 500));
      } catch {
        // not a log line
        onOutputLine?.(line);
      }
    }
  });
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let exitedEarly = false;
  void exited.then(() => {
    exitedEarly = true;
  });
  const url = `http://127.0.0.1:${port}/graphql`;
  const deadline = Date.now() + timeoutMs;
  let lastProbe = 'no answer';
  while (!sawReady) {
    if (exitedEarly) throw new Error(`${name} exited during start-up:\n${stderr.slice(-3000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `${name} was not ready within ${timeoutMs} ms (last probe: ${lastProbe}):\n${stderr.slice(-3000)}`,
      );
    }
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: 'query Ping { __typename }', operationName: 'Ping' }),
      });
      if (response.ok) break;
      lastProbe = `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    name,
    pid: child.pid as number,
    url,
    process: child,
    stderr: () => stderr,
    warnings: () => warnings,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

let clockTicks: number | undefined;
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** CPU time (user + system) the process has used, in milliseconds. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state: utime is field 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / ticksPerSecond();
}

/** Resident memory (VmRSS) and its peak (VmHWM), in MB. */
export function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Waits until the process uses less than `maxCpuShare` of a core over 500 ms (start-up work such as bundling done). */
export async function waitUntilIdle(pid: number, maxCpuShare = 0.05, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const before = cpuMs(pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    if ((cpuMs(pid) - before) / 500 < maxCpuShare) return;
  }
}

/** CPU time all processes of the machine have used (from /proc/stat), in milliseconds. */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal ...
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const ticks = [user, nice, system, irq, softirq, steal].reduce((a: number, b) => a + (b ?? 0), 0);
  return (ticks * 1000) / ticksPerSecond();
}

/**
 * Measures, over a run, the CPU used on the machine by processes other than `ours` (in cores):
 * another job on a shared 2-core machine skews every figure, so each run records it.
 */
export function backgroundMeter(ours: () => number[]): () => number {
  const started = performance.now();
  const machine = machineBusyMs();
  const own = ours().reduce((sum, pid) => sum + safeCpuMs(pid), 0);
  return () => {
    const elapsed = performance.now() - started;
    const machineUsed = machineBusyMs() - machine;
    const ownUsed = ours().reduce((sum, pid) => sum + safeCpuMs(pid), 0) - own;
    return Math.max(0, (machineUsed - ownUsed) / elapsed);
  };
}

function safeCpuMs(pid: number): number {
  try {
    return cpuMs(pid);
  } catch {
    return 0;
  }
}
