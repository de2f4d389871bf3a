/**
 * Runs the real server (or a script) as a child process, the way a user does: `node --import
 * tsx <entry>` in the project folder. Collects its JSON log lines and stderr, and lets a test
 * await a log line or the process exit instead of sleeping.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess, ChildProcessByStdio } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ENV_SPEC } from '../../src/config/index.js';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface NodeProcess {
  child: ChildProcess;
  pid: number;
  /** The stdout lines that parsed as JSON log lines, in order. */
  logs: LogLine[];
  stdout(): string;
  stderr(): string;
  /** Resolves with the first log line (already seen or still to come) that matches; rejects if the process exits first. */
  waitForLog(match: (line: LogLine) => boolean, description: string): Promise<LogLine>;
  /** Resolves with stdout once `pattern` matches it (a script's plain output); rejects if the process exits first. */
  waitForOutput(pattern: RegExp, description: string): Promise<string>;
  exited: Promise<Exit>;
}

/** Every setting of the spec would change what the child does: the child gets only what a test gives it. */
const INHERITED_TO_DROP = Object.keys(ENV_SPEC);

function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of INHERITED_TO_DROP) delete base[name];
  for (const name of Object.keys(base)) if (name.startsWith('VITEST')) delete base[name];
  return { ...base, ...env };
}

/** Starts `node --import tsx <entry> [...args]` in the project folder with the run's environment plus `env`. */
export function runNode(entry: string, env: Record<string, string>, args: readonly string[] = []): NodeProcess {
  return watch(
    spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
      cwd: PROJECT_ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/**
 * Starts `node <file>` in the file's own folder, as a container or a Lambda runs a bundle: no
 * tsx, nothing resolved from the project. The environment is the same as runNode's.
 */
export function runBundle(file: string, env: Record<string, string>): NodeProcess {
  return watch(
    spawn(process.execPath, [file], { cwd: path.dirname(file), env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
}

function watch(child: ChildProcessByStdio<null, Readable, Readable>): NodeProcess {
  let stdout = '';
  let stderr = '';
  let partial = '';
  const logs: LogLine[] = [];
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // not a log line (a script's plain output): kept in stdout()
      }
    }
    for (const waiter of waiters) waiter();
  });
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      // 'exit' may come before the pipes are drained; 'close' comes after both.
      child.once('close', () => resolve({ code, signal }));
    });
  });

  /** Resolves with what `find` finds (now or after more output); rejects if the process exits first. */
  const waitFor = <T>(find: () => T | undefined, description: string) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found === undefined) return;
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
      void exited.then(({ code, signal }) => {
        if (!waiters.has(check)) return;
        waiters.delete(check);
        reject(new Error(`process exited (${signal ?? `code ${code}`}) before ${description}; stderr:\n${stderr}`));
      });
    });
  const waitForLog = (match: (line: LogLine) => boolean, description: string) =>
    waitFor(() => logs.find(match), `logging ${description}`);
  const waitForOutput = (pattern: RegExp, description: string) =>
    waitFor(() => (pattern.test(stdout) ? stdout : undefined), description);

  return {
    child,
    pid: child.pid as number,
    logs,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForLog,
    waitForOutput,
    exited,
  };
}

/**
 * stderr as a list of non-empty lines. Nothing is filtered: on the supported Node.js the AWS SDK
 * prints no runtime notice, and a test that counts lines would catch one that came back.
 */
export function stderrLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.trim() !== '');
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Pids of the DynamoDB Local java processes that persist to `dataDir` (found by their command line). */
export function dynamoLocalPidsFor(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // exited while we looked
    }
    const dbPath = args.indexOf('-dbPath');
    if (args.some((arg) => arg.endsWith('DynamoDBLocal.jar')) && dbPath >= 0 && args[dbPath + 1] === dataDir) {
      pids.push(Number(entry));
    }
  }
  return pids;
}

/** A process as /proc shows it: its pid and start time (together they name it, whatever reuses the pid). */
export interface ProcessId {
  pid: number;
  startTime: string;
  /** Its process group. */
  group: number;
  command: string;
}

interface ProcessStat {
  parent: number;
  group: number;
  startTime: string;
}

/** A process's parent, group and start time from /proc, or undefined once it has exited. */
export function processStat(pid: number): ProcessStat | undefined {
  try {
    // The command name is in parentheses and may hold spaces: count the fields after it.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { parent: Number(fields[1]), group: Number(fields[2]), startTime: fields[19] ?? '' };
  } catch {
    return undefined; // exited while we looked
  }
}

/** Every process descended from `pid` (children in process groups of their own included), from /proc. */
export function descendants(pid: number): ProcessId[] {
  const stats = new Map<number, ProcessStat>();
  for (const entry of readdirSync('/proc')) {
    const stat = /^\d+$/.test(entry) ? processStat(Number(entry)) : undefined;
    if (stat) stats.set(Number(entry), stat);
  }
  const found: ProcessId[] = [];
  let generation = [pid];
  while (generation.length > 0) {
    const next = [...stats].filter(([, stat]) => generation.includes(stat.parent)).map(([child]) => child);
    for (const child of next) {
      let command = '';
      try {
        command = readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      } catch {
        // exited while we looked
      }
      const stat = stats.get(child);
      found.push({ pid: child, startTime: stat?.startTime ?? '', group: stat?.group ?? 0, command });
    }
    generation = next;
  }
  return found;
}

/** Whether that very process (not another one given its pid since) still exists. */
export const stillRunning = (process: ProcessId): boolean => processStat(process.pid)?.startTime === process.startTime;
