/**
 * `npm run fleet` as a user runs it: two API instances, the consumer, redis-server and the
 * fleet's own DynamoDB Local, started from scratch. A write on one instance reaches a subscriber
 * of the other and evicts what the other had cached; SIGINT (Ctrl-C) then stops every process
 * the fleet started, with one line.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import { loadScriptConfig } from '../../src/config/index.js';
import type { ChildServer } from '../support/childServers.js';
import { subscribe } from '../support/fanOut.js';
import { postGraphQL } from '../support/load.js';
import { descendants, processStat, runNode, stillRunning } from '../support/serverProcess.js';
import type { NodeProcess, ProcessId } from '../support/serverProcess.js';
import { waitUntil } from '../support/waitUntil.js';
import { PLACE_ORDER } from '../support/writes.js';

const PRODUCT = 'headphones-x1';
const STOCK = `query Stock { product(productId: "${PRODUCT}") { stock } }`;
const READY = /Ctrl-C stops everything\.\n/;

let dataDir: string;
let fleet: NodeProcess;
let help: NodeProcess;
let badFlag: NodeProcess;
let apis: ChildServer[];
let members: ProcessId[];
const clients: Client[] = [];
// The fleet's members verify the development tokens (no JWT_SECRET is set for them).
const token = (userId: string, role: 'customer' | 'admin') => signToken({ userId, role }, loadScriptConfig({}).auth);

/** The API rows of the fleet's summary (`  api-1   http://127.0.0.1:<port>/graphql`), as servers. */
function apisIn(output: string): ChildServer[] {
  return [...output.matchAll(/^ {2}api-\d+ +(http:\/\/127\.0\.0\.1:(\d+))\/graphql$/gm)].map(([, origin, port]) => ({
    // The instances are the fleet's processes; the fleet stands in for them where a process is asked for.
    node: fleet,
    port: Number(port),
    origin: origin as string,
    url: `${origin as string}/graphql`,
  }));
}

/** The product's stock as `api` answers it, and whether its answer came from the cache. */
async function stockOn(api: ChildServer, authorization: string): Promise<{ stock: number; cache: string }> {
  const response = await fetch(api.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ query: STOCK, extensions: { cache: true } }),
  });
  const body = (await response.json()) as {
    data: { product: { stock: number } };
    extensions: { cache: { status: string } };
  };
  return { stock: body.data.product.stock, cache: body.extensions.cache.status };
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'tablegraph-fleet-'));
  help = runNode('scripts/fleet.ts', {}, ['--help']);
  badFlag = runNode('scripts/fleet.ts', {}, ['--instance', '2']);
  fleet = runNode('scripts/fleet.ts', { DATA_DIR: dataDir }, ['--instances', '2', '--port', '0']);
  apis = apisIn(await fleet.waitForOutput(READY, 'the fleet was ready'));
  // What the fleet started: each member leads a process group of its own. (The fleet's own group
  // holds tsx's esbuild helper, which ends with the fleet, not before it.)
  const own = processStat(fleet.pid)?.group;
  members = descendants(fleet.pid).filter((member) => member.group !== own);
}, 180_000);

afterAll(async () => {
  for (const client of clients) await client.dispose();
  if (fleet.child.exitCode === null) {
    // Found before the fleet goes: its orphans would no longer descend from it.
    const left = descendants(fleet.pid);
    fleet.child.kill('SIGKILL');
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run fleet', () => {
  it('answers --help, and refuses a bad flag in one line', async () => {
    expect(await help.exited).toEqual({ code: 0, signal: null });
    expect(help.stdout()).toMatch(/^usage: npm run fleet -- \[--instances <n>\]/);
    expect(await badFlag.exited).toEqual({ code: 2, signal: null });
    expect(badFlag.stderr()).toBe('fleet: unknown flag --instance (npm run fleet -- --help shows the usage)\n');
  });

  it('prints the URL of each instance and runs each process of the topology', () => {
    expect(apis).toHaveLength(2);
    expect(new Set(apis.map((api) => api.port)).size).toBe(2);
    expect(fleet.stdout()).toMatch(/^ {2}consumer +http:\/\/127\.0\.0\.1:\d+\/readyz$/m);
    expect(fleet.stdout()).toMatch(/^ {2}redis +redis:\/\/127\.0\.0\.1:\d+$/m);
    const running = (part: string) => members.filter((member) => member.command.includes(part)).length;
    expect([
      running('src/main.ts'),
      running('src/consumer/main.ts'),
      running('redis-server'),
      running('DynamoDBLocal'),
    ]).toEqual([2, 1, 1, 1]);
  });

  it('tells a subscriber of one instance of an order placed on the other, and evicts what the other cached', async () => {
    const [first, second] = apis as [ChildServer, ChildServer];
    const alice = await token('alice', 'customer');
    const admin = `Bearer ${await token('fleet-admin', 'admin')}`;
    const subscriber = await subscribe(
      clients,
      'alice on api-2',
      second,
      alice,
      'subscription { orderEvents { order { orderId } } }',
    );
    // The second instance caches once the consumer's heartbeats reach it.
    const before = await waitUntil(
      async () => {
        const answer = await stockOn(second, admin);
        return answer.cache === 'hit' && answer;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'a cache hit on api-2' },
    );

    const placed = await postGraphQL(first.url, `Bearer ${alice}`, PLACE_ORDER, {
      input: { userId: 'alice', idempotencyKey: randomUUID(), items: [{ productId: PRODUCT, quantity: 1 }] },
    });
    const orderId = (placed.body?.data as { placeOrder: { order: { orderId: string } } }).placeOrder.order.orderId;

    await subscriber.waitFor([orderId], 30_000);
    // RESPONSE_CACHE_MAX_AGE is 5 minutes: only the eviction makes the new stock visible this soon.
    await waitUntil(async () => (await stockOn(second, admin)).stock === before.stock - 1, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the new stock on api-2',
    });
  }, 90_000);

  it('stops every process it started on SIGINT, with one line', async () => {
    for (const client of clients.splice(0)) await client.dispose();
    const before = fleet.stdout();
    fleet.child.kill('SIGINT');
    expect(await fleet.exited).toEqual({ code: 0, signal: null });
    const after = fleet.stdout().slice(before.length);
    expect(after).toMatch(
      /^fleet stopped: 2 API instances, 1 consumer, redis-server and DynamoDB Local \([\d.]+ s\)\n$/,
    );
    expect(members.filter(stillRunning).map((member) => member.command)).toEqual([]);
    for (const api of apis) await expect(fetch(`${api.origin}/healthz`)).rejects.toThrow();
  }, 60_000);
});
