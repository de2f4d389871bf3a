import { mkdtempSync, readFileSync, rmSync, symlinkSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../../src/db/client.js';
import { freePort } from '../../src/db/local.js';
import { demoData } from '../../src/seed/demoData.js';
import { userKey, userOrderSK, userPK } from '../../src/table/keys.js';
import { anOrder, aUser, store } from '../support/factories.js';
import { dynamoLocalPidsFor, isAlive, runNode, stderrLines } from '../support/serverProcess.js';
import type { LogLine, NodeProcess } from '../support/serverProcess.js';

const START_TIMEOUT = 90_000;
const READY = (line: { msg: string }) => line.msg.startsWith('tablegraph ready at');

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `tablegraph-${prefix}-`));
  tempDirs.push(dir);
  return dir;
}

const running = new Set<NodeProcess>();
function startServer(env: Record<string, string>): NodeProcess {
  const server = runNode('src/main.ts', { LOG_LEVEL: 'info', ...env });
  running.add(server);
  void server.exited.then(() => running.delete(server));
  return server;
}

afterAll(async () => {
  // A failed test may leave a server running: stop it the way a user would, and wait.
  await Promise.all(
    [...running].map((server) => {
      server.child.kill('SIGTERM');
      return server.exited;
    }),
  );
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

interface OrdersPage {
  user: {
    name: string;
    orders: {
      totalCount: number;
      edges: { node: { orderId: string } }[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
  } | null;
}

/** alice's `Authorization` value, as printed in the development-tokens log line of the latest start. */
let aliceAuthorization = '';
const DEV_TOKENS = (line: LogLine) => line.msg.startsWith('development tokens');

async function gql<T>(port: number, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: aliceAuthorization },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data as T;
}

/** Walks alice's orders forward, 7 a page: her name, totalCount, and every orderId in the order served. */
async function walkAliceOrders(port: number) {
  const orderIds: string[] = [];
  const totalCounts = new Set<number>();
  let name: string | undefined;
  let after: string | null = null;
  for (let page = 0; page < 20; page++) {
    const data: OrdersPage = await gql<OrdersPage>(
      port,
      `query($after: String) { user(userId: "alice") { name orders(first: 7, after: $after) {
        totalCount edges { node { orderId } } pageInfo { hasNextPage endCursor } } } }`,
      { after },
    );
    if (!data.user) throw new Error('alice is missing');
    name = data.user.name;
    totalCounts.add(data.user.orders.totalCount);
    orderIds.push(...data.user.orders.edges.map((edge) => edge.node.orderId));
    if (!data.user.orders.pageInfo.hasNextPage) break;
    after = data.user.orders.pageInfo.endCursor;
  }
  return { name, totalCounts: [...totalCounts], orderIds };
}

const demo = demoData();
const aliceDemoOrderIds = demo.orders
  .filter((order) => order.userId === 'alice')
  .sort((a, b) => b.placedAt.localeCompare(a.placedAt))
  .map((order) => order.orderId);

interface PidRecord {
  pid: number;
  port: number;
  serverPid: number;
}
const readPidRecord = (dataDir: string) =>
  JSON.parse(readFileSync(path.join(dataDir, 'dynamodb-local.json'), 'utf8')) as PidRecord;

describe('the server on its embedded DynamoDB Local, across restarts', () => {
  // The tests run in order and share one data directory: each start proves several things.
  const dataDir = tempDir('data');
  let port: number;
  let server: NodeProcess;

  it(
    'creates the table and seeds the demo data on a first start on an empty data directory',
    async () => {
      port = await freePort();
      server = startServer({ DATA_DIR: dataDir, PORT: String(port) });
      await server.waitForLog(READY, 'the ready line');
      aliceAuthorization = String((await server.waitForLog(DEV_TOKENS, 'the development tokens')).alice);
      expect(aliceAuthorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      const messages = server.logs.map((line) => line.msg);
      expect(messages).toContain('created table');
      expect(messages).toContain('seeded demo data');
      expect(readPidRecord(dataDir).serverPid).toBe(server.pid);
    },
    START_TIMEOUT,
  );

  it('serves the demo data at /graphql: alice has her 30 orders, newest first', async () => {
    const walk = await walkAliceOrders(port);
    expect(walk.name).toBe('Alice Example');
    expect(walk.totalCounts).toEqual([30]);
    expect(walk.orderIds).toEqual(aliceDemoOrderIds);
  });

  it(
    'stops on SIGTERM with exit code 0 and stops its DynamoDB Local too',
    async () => {
      const javaPid = readPidRecord(dataDir).pid;
      expect(isAlive(javaPid)).toBe(true);
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      expect(server.logs.map((line) => line.msg)).toContain('stopped');
      expect(isAlive(javaPid)).toBe(false);
      expect(dynamoLocalPidsFor(dataDir)).toEqual([]);
      expect(existsSync(path.join(dataDir, 'dynamodb-local.json'))).toBe(false);
    },
    START_TIMEOUT,
  );

  it(
    'does not seed again when restarted on the same data directory',
    async () => {
      port = await freePort();
      server = startServer({ DATA_DIR: dataDir, PORT: String(port) });
      await server.waitForLog(READY, 'the ready line');
      aliceAuthorization = String((await server.waitForLog(DEV_TOKENS, 'the development tokens')).alice);
      const messages = server.logs.map((line) => line.msg);
      expect(messages).not.toContain('created table');
      expect(messages).not.toContain('seeded demo data');
    },
    START_TIMEOUT,
  );

  it('still serves the data written before the restart, without duplicates', async () => {
    const walk = await walkAliceOrders(port);
    expect(walk.totalCounts).toEqual([30]);
    expect(walk.orderIds).toEqual(aliceDemoOrderIds);
  });

  it(
    'restores the demo data with the seed script while the server runs',
    async () => {
      // Change alice behind the server's back: rename her, drop an order, add one.
      const dynamo = createDynamo({ endpoint: `http://127.0.0.1:${readPidRecord(dataDir).port}`, region: 'us-east-1' });
      const newest = demo.orders.find((order) => order.orderId === aliceDemoOrderIds[0]);
      if (!newest) throw new Error('no demo order');
      const alice = aUser({ userId: 'alice' });
      const extra = anOrder(alice, [], { orderId: 'not-a-demo-order', placedAt: '2027-01-01T00:00:00.000Z' });
      try {
        await dynamo.doc.send(
          new UpdateCommand({
            TableName: 'MainTable',
            Key: userKey('alice'),
            UpdateExpression: 'SET #name = :name',
            ExpressionAttributeNames: { '#name': 'name' },
            ExpressionAttributeValues: { ':name': 'Changed' },
          }),
        );
        await dynamo.doc.send(
          new DeleteCommand({
            TableName: 'MainTable',
            Key: { PK: userPK('alice'), SK: userOrderSK(newest.placedAt, newest.orderId) },
          }),
        );
        await store(dynamo.doc, 'MainTable', { orders: [extra] });
      } finally {
        dynamo.client.destroy();
      }
      const changed = await walkAliceOrders(port);
      expect(changed.name).toBe('Changed');
      expect(changed.orderIds).toContain('not-a-demo-order');

      const seed = runNode('scripts/seed.ts', { DATA_DIR: dataDir });
      expect(await seed.exited).toEqual({ code: 0, signal: null });
      expect(seed.stdout()).toMatch(/seeded \d+ demo items into MainTable/);

      const restored = await walkAliceOrders(port);
      expect(restored.name).toBe('Alice Example');
      expect(restored.totalCounts).toEqual([30]);
      expect(restored.orderIds).toEqual(aliceDemoOrderIds);
    },
    START_TIMEOUT,
  );

  it(
    'stops on SIGINT like on SIGTERM, even when Ctrl-C arrives twice (from the terminal and from npm)',
    async () => {
      const javaPid = readPidRecord(dataDir).pid;
      expect(isAlive(javaPid)).toBe(true);
      server.child.kill('SIGINT');
      // The second one arrives while the first is being handled (signals sent together merge).
      await server.waitForLog((line) => line.msg === 'stopping', 'the stopping line');
      server.child.kill('SIGINT');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      expect(isAlive(javaPid)).toBe(false);
      expect(dynamoLocalPidsFor(dataDir)).toEqual([]);
    },
    START_TIMEOUT,
  );
});

/** Starts the server expecting it to fail; returns its exit and its stderr lines (the SDK's Node notice removed). */
async function failedStart(env: Record<string, string>) {
  const server = startServer(env);
  const exit = await server.exited;
  return { exit, lines: stderrLines(server.stderr()), stderr: server.stderr() };
}

describe('a start that cannot succeed', () => {
  it(
    'says in one line that Java is needed and how to install it when java is not on PATH',
    async () => {
      const bin = tempDir('bin');
      symlinkSync(process.execPath, path.join(bin, 'node'));
      const { exit, lines, stderr } = await failedStart({
        DATA_DIR: tempDir('data'),
        PORT: String(await freePort()),
        PATH: bin,
      });
      expect(exit.code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/Java 17\+ is needed/);
      expect(lines[0]).toMatch(/apt-get install openjdk-17-jre-headless/);
      expect(stderr).not.toMatch(/^ {4}at /m);
    },
    START_TIMEOUT,
  );

  describe('when the port is taken', () => {
    const dataDir = tempDir('data');
    let blocker: net.Server;
    let port: number;
    let result: Awaited<ReturnType<typeof failedStart>>;

    it(
      'exits with code 1 and one line naming the port',
      async () => {
        blocker = net.createServer();
        await new Promise<void>((resolve) => blocker.listen(0, resolve));
        port = (blocker.address() as net.AddressInfo).port;
        try {
          // Demo data plays no part here; skipping it saves seconds (the port is bound after the seed).
          result = await failedStart({ DATA_DIR: dataDir, PORT: String(port), SEED_DEMO_DATA: 'false' });
        } finally {
          await new Promise((resolve) => blocker.close(resolve));
        }
        expect(result.exit.code).toBe(1);
        expect(result.lines).toEqual([
          `tablegraph: Port ${port} is already in use: stop what holds it or set PORT to another port`,
        ]);
        expect(result.stderr).not.toMatch(/^ {4}at /m);
      },
      START_TIMEOUT,
    );

    it('leaves no DynamoDB Local running', () => {
      expect(result.exit.code).toBe(1);
      expect(dynamoLocalPidsFor(dataDir)).toEqual([]);
      expect(existsSync(path.join(dataDir, 'dynamodb-local.json'))).toBe(false);
    });
  });

  it(
    'says in one line that DynamoDB cannot be reached when DYNAMODB_ENDPOINT points at a closed port',
    async () => {
      const closed = await freePort();
      const { exit, lines, stderr } = await failedStart({
        DYNAMODB_ENDPOINT: `http://127.0.0.1:${closed}`,
        PORT: String(await freePort()),
      });
      expect(exit.code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^tablegraph: Cannot reach DynamoDB at http://127\\.0\\.0\\.1:${closed}`));
      expect(lines[0]).toMatch(/check DYNAMODB_ENDPOINT/);
      expect(stderr).not.toMatch(/^ {4}at /m);
    },
    START_TIMEOUT,
  );
});
