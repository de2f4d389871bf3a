/**
 * How java runs DynamoDB Local behind our loopback launcher (java/LoopbackDynamoDBLocal.java).
 * Compiled once into node_modules/.cache when javac is on PATH (a JDK: start-up saves the
 * in-memory compile); otherwise java runs the source file itself (source-file mode needs only
 * a JRE 11+). Either way npm install needs no Java, and nothing binary lives in the repository.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../projectRoot.js';

const LAUNCHER_CLASS = 'LoopbackDynamoDBLocal';
// From the project root, so that the compiled server (dist/) finds the source too.
const SOURCE = path.join(projectRoot(), 'src', 'db', 'java', `${LAUNCHER_CLASS}.java`);

/** The jar goes last on the class path: tools that look for DynamoDB Local match `...DynamoDBLocal.jar`. */
export function launcherCommand(jarDir: string): string[] {
  const jar = path.join(jarDir, 'DynamoDBLocal.jar');
  const compiled = compiledLauncher(jar);
  return compiled ? ['-cp', `${compiled}${path.delimiter}${jar}`, LAUNCHER_CLASS] : ['-cp', jar, SOURCE];
}

/** The folder holding the compiled launcher for this source, compiling it first if needed; undefined without javac. */
function compiledLauncher(jar: string): string | undefined {
  const source = readFileSync(SOURCE);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = path.join(projectRoot(), 'node_modules', '.cache', 'tablegraph-dynamodb-launcher', hash);
  if (existsSync(path.join(dir, `${LAUNCHER_CLASS}.class`))) return dir;
  const staging = `${dir}.${process.pid}.tmp`;
  mkdirSync(staging, { recursive: true });
  const result = spawnSync('javac', ['-nowarn', '-cp', jar, '-d', staging, SOURCE], { stdio: 'ignore' });
  if (result.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    return undefined;
  }
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process got there first
  }
  return existsSync(path.join(dir, `${LAUNCHER_CLASS}.class`)) ? dir : undefined;
}
