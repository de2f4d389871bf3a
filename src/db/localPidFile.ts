/**
 * The record a data folder keeps of the emulator serving it (`dynamodb-local.json`: java's pid,
 * its port, the server's pid): `npm run seed` finds a running one there, and a server that starts
 * on the folder stops the java child a killed server left behind, or refuses when that server is
 * still alive.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LocalDynamoError } from './localChild.js';

const PID_FILE = 'dynamodb-local.json';

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export interface PidRecord {
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
export function reclaimDataDir(dataDir: string): void {
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

/** Records `pid` (java's) serving `dataDir` on `port` for this server. */
export function writePidRecord(dataDir: string, pid: number | undefined, port: number): void {
  writeFileSync(path.join(dataDir, PID_FILE), JSON.stringify({ pid, port, serverPid: process.pid }));
}

/** Removes the record, once its java child is stopped. */
export function removePidRecord(dataDir: string): void {
  rmSync(path.join(dataDir, PID_FILE), { force: true });
}
