/**
 * The embedded DynamoDB Local of `npm start`, as a user runs it: reachable from this machine
 * only (read from the kernel's table of listening sockets), its files owner-only, and brought
 * back with its data after a kill -9 of the java child. One server for the whole file: a JVM
 * start is the expensive part.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../src/auth/tokens.js';
import { DEV_JWT_SECRET } from '../src/config/index.js';
import { freePort } from '../src/db/local.js';
import { EMULATOR_UNSYNCED_MS } from './support/harness.js';
import { pollUntil } from './support/load.js';
import { dynamoLocalPidsFor, isAlive, runNode, stderrLines } from './support/serverProcess.js';
import type { NodeProcess } from './support/serverProcess.js';

const AUTH = { secret: DEV_JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' };

/**
 * The local addresses listening on `port`, from /proc/net/tcp and tcp6 (state 0A = LISTEN),
 * decoded: `127.0.0.1`, `::ffff:127.0.0.1`, `0.0.0.0`, `::` ...
 */
function listeningAddresses(port: number): string[] {
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || !local) continue;
      const [hex, portHex] = local.split(':') as [string, string];
      if (parseInt(portHex, 16) !== port) continue;
      found.push(hex.length === 8 ? ipv4(hex) : ipv6(hex));
    }
  }
  return found;
}

/** /proc prints each 32-bit word in host (little-endian) byte order. */
const wordBytes = (word: string) => (word.match(/../g) ?? []).reverse().map((byte) => parseInt(byte, 16));
const ipv4 = (hex: string) => wordBytes(hex).join('.');
function ipv6(hex: string): string {
  const bytes = (hex.match(/.{8}/g) ?? []).flatMap(wordBytes);
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  if (bytes.every((b) => b === 0)) return '::';
  if (bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1) return '::1';
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
}

const isLoopbackAddress = (address: string) => /^(127\.|::ffff:127\.)/.test(address) || address === '::1';

let dataDir: string;
let dynamoPort: number;
let server: NodeProcess;
let origin: string;
const pidRecord = () =>
  JSON.parse(readFileSync(path.join(dataDir, 'dynamodb-local.json'), 'utf8')) as { pid: number; port: number };

beforeAll(async () => {
  dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'tablegraph-embedded-')), 'data');
  dynamoPort = await freePort();
  const port = await freePort();
  server = runNode('src/main.ts', {
    LOG_LEVEL: 'info',
    PORT: String(port),
    DATA_DIR: dataDir,
    DYNAMODB_LOCAL_PORT: String(dynamoPort),
    STREAM_CONSUMER: 'false',
  });
  origin = `http://127.0.0.1:${port}`;
  await server.waitForLog((line) => line.msg.startsWith('tablegraph ready at'), 'ready');
}, 120_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  if (dataDir) rmSync(path.dirname(dataDir), { recursive: true, force: true });
});

describe('the embedded DynamoDB Local', () => {
  it('listens on the loopback address only', () => {
    const addresses = listeningAddresses(dynamoPort);
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.filter((address) => !isLoopbackAddress(address))).toEqual([]);
  });

  it('keeps its files in a DATA_DIR that only its owner may enter', () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it('comes back on the same port with its data after kill -9 of the java child', async () => {
    const token = await signToken({ userId: 'phoenix', role: 'customer' }, AUTH);
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const response = await fetch(`${origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: Record<string, any> | null; errors?: unknown[] };
    };
    const created = await gql(
      'mutation($input: CreateUserInput!) { createUser(input: $input) { user { userId } userErrors { code } } }',
      { input: { email: 'phoenix@example.com', name: 'Phoenix' } },
    );
    expect(created.data?.createUser).toEqual({ user: { userId: 'phoenix' }, userErrors: [] });
    // The data must survive the kill, and DynamoDB Local makes a write durable only some
    // milliseconds after acknowledging it, with nothing to wait for but the time.
    await new Promise((resolve) => setTimeout(resolve, EMULATOR_UNSYNCED_MS));

    const killed = pidRecord().pid;
    process.kill(killed, 'SIGKILL');
    const restartLine = await server.waitForLog((line) => line.msg === 'embedded DynamoDB Local restarted', 'restart');
    const restarted = restartLine.dynamodbLocal as { pid: number };
    expect(isAlive(killed)).toBe(false);
    expect(restarted.pid).not.toBe(killed);
    expect(pidRecord()).toMatchObject({ pid: restarted.pid, port: dynamoPort });
    expect(
      server.logs.some(
        (line) => line.msg === 'embedded DynamoDB Local died' && (line.dynamodbLocal as { pid: number }).pid === killed,
      ),
    ).toBe(true);
    // Still loopback only after the restart.
    expect(listeningAddresses(dynamoPort).filter((address) => !isLoopbackAddress(address))).toEqual([]);

    await pollUntil(
      async () => (await fetch(`${origin}/readyz`)).status,
      (status) => status === 200,
      { timeoutMs: 15_000, description: '/readyz 200 after the restart' },
    );
    const after = await gql('{ viewer { userId email } }');
    expect(after.data?.viewer).toEqual({ userId: 'phoenix', email: 'phoenix@example.com' });
    expect(server.child.exitCode).toBeNull();
  }, 90_000);

  it('refuses, in one line, a second server told to use the port this one holds, and never serves its data', async () => {
    const before = pidRecord();
    const otherDir = path.join(path.dirname(dataDir), 'second');
    const second = runNode('src/main.ts', {
      LOG_LEVEL: 'info',
      PORT: String(await freePort()),
      DATA_DIR: otherDir,
      DYNAMODB_LOCAL_PORT: String(dynamoPort),
      STREAM_CONSUMER: 'false',
      SEED_DEMO_DATA: 'false',
    });
    expect(await second.exited).toEqual({ code: 1, signal: null });
    expect(stderrLines(second.stderr())).toEqual([
      expect.stringMatching(
        new RegExp(`^tablegraph: Port ${dynamoPort} for DynamoDB Local is in use .*DYNAMODB_LOCAL_PORT`),
      ),
    ]);
    expect(second.logs.some((line) => line.msg.startsWith('tablegraph ready at'))).toBe(false);
    expect(dynamoLocalPidsFor(otherDir)).toEqual([]);
    // The first server and its database carry on untouched.
    expect(pidRecord()).toEqual(before);
    expect(isAlive(before.pid)).toBe(true);
    expect((await fetch(`${origin}/readyz`)).status).toBe(200);
  }, 90_000);
});
