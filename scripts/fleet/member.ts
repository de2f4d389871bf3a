/**
 * One process of `npm run fleet` (an API instance, a consumer, redis-server): started in a
 * process group of its own, so that the terminal's Ctrl-C reaches the fleet alone and the fleet
 * stops its members in order (API instances and consumers first, then Redis, then the database).
 * Its stdout and stderr go to its log file; the warnings and errors among them (JSON log lines
 * at level 40 and above, and any line that is not JSON) are also shown on the fleet's terminal,
 * one line each, until the fleet stops.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** pino's numeric level of `warn`. */
const WARN = 40;
/** Lines kept for waitForLine: a ready line comes among the first few dozen. */
const KEPT_LINES = 1000;
/** How long a member may take to stop after SIGTERM before it is killed. */
export const STOP_GRACE_MS = 20_000;

export interface MemberOptions {
  name: string;
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  /** Where a warning or error line goes (the fleet's terminal). */
  show: (line: string) => void;
  /** Whether a line that is not JSON is worth showing (default: yes, it is a process's own complaint). */
  showsPlainLine?: (text: string) => boolean;
}

/** A line of a member's output: its text, and the log line it parses as, if it does. */
export interface OutputLine {
  text: string;
  json: Record<string, unknown> | undefined;
}

export interface Member {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Resolves once the process has exited (and its output is flushed to the log file). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first line `match` accepts; rejects with the member's last words if it exits first. */
  waitForLine(match: (line: OutputLine) => boolean, timeoutMs: number): Promise<OutputLine>;
  /** Stops showing its warnings (the fleet is stopping: its one line is the last). */
  quiet(): void;
  /** SIGTERM, then SIGKILL after STOP_GRACE_MS; resolves once it has exited. */
  stop(): Promise<void>;
}

/** The text a log line shows on the terminal: its message, and its error's, if any. */
function describe(line: Record<string, unknown>): string {
  const err = line.err as { message?: unknown } | undefined;
  const message = typeof line.msg === 'string' ? line.msg : JSON.stringify(line);
  return typeof err?.message === 'string' ? `${message}: ${err.message}` : message;
}

const groupExists = (group: number): boolean => {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Ends what a member left behind in its process group once it has exited (a helper it started,
 * such as esbuild's service process), and waits until the group is empty, so that "stopped" is
 * true of every process.
 */
async function endGroup(group: number): Promise<void> {
  if (!groupExists(group)) return;
  process.kill(-group, 'SIGKILL');
  const deadline = performance.now() + STOP_GRACE_MS;
  while (groupExists(group) && performance.now() < deadline) await sleep(10);
}

export function startMember(options: MemberOptions): Member {
  const log = createWriteStream(options.logFile, { flags: 'w' });
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let showing = true;
  let lastWords = '';
  const lines: OutputLine[] = [];
  const listeners = new Set<() => void>();
  const onLine = (text: string) => {
    if (text.trim() === '') return;
    let parsed: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(text);
      if (value !== null && typeof value === 'object') parsed = value as Record<string, unknown>;
    } catch {
      // not a log line: a start-up failure, or a tool's own output
    }
    lines.push({ text, json: parsed });
    if (lines.length > KEPT_LINES) lines.shift();
    for (const listener of [...listeners]) listener();
    if (!parsed) lastWords = text;
    const shown = parsed
      ? typeof parsed.level === 'number' && parsed.level >= WARN
      : (options.showsPlainLine?.(text) ?? true);
    if (showing && shown) options.show(`[${options.name}] ${parsed ? describe(parsed) : text}`);
  };
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      log.write(chunk);
      const split = (partial + chunk).split('\n');
      partial = split.pop() ?? '';
      for (const text of split) onLine(text);
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // A command that cannot start (not installed) emits 'error' and no 'close'.
    child.once('error', (error) => {
      lastWords = error.message;
      log.end(() => resolve({ code: null, signal: null }));
    });
    // 'close' comes once the pipes are drained too.
    child.once('close', (code, signal) => log.end(() => resolve({ code, signal })));
  });

  return {
    name: options.name,
    child,
    logFile: options.logFile,
    exited,
    waitForLine: (match, timeoutMs) =>
      new Promise((resolve, reject) => {
        const finish = (error?: Error, line?: OutputLine) => {
          listeners.delete(check);
          clearTimeout(timer);
          if (error) reject(error);
          else resolve(line as OutputLine);
        };
        const check = () => {
          const found = lines.find(match);
          if (found) finish(undefined, found);
        };
        const timer = setTimeout(
          () => finish(new Error(`${options.name} was not ready after ${timeoutMs / 1000} s (see ${options.logFile})`)),
          timeoutMs,
        );
        listeners.add(check);
        check();
        void exited.then(({ code, signal }) => {
          if (!listeners.has(check)) return;
          const why = lastWords || `see ${options.logFile}`;
          finish(new Error(`${options.name} exited (${signal ?? `code ${code}`}) before it was ready: ${why}`));
        });
      }),
    quiet: () => {
      showing = false;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      await exited;
      if (child.pid !== undefined) await endGroup(child.pid);
    },
  };
}
