/**
 * A child process for the leak check: a server on a table of its own, one graphql-ws client,
 * and `--cycles` subscribe/complete cycles, each completed while the subscription waits for
 * an event (the case that used to keep it registered). Prints one JSON line: heap used before
 * and after (after a full GC), and how many subscriptions the server still holds.
 *
 *   DYNAMODB_ENDPOINT=http://127.0.0.1:8000 node --expose-gc --import tsx test/support/subscriptionCycles.ts --cycles 2000
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { createClient } from 'graphql-ws';
import { pino } from 'pino';
import WebSocket from 'ws';
import { signToken } from '../../src/auth/tokens.js';
import { createDynamo } from '../../src/db/client.js';
import { CursorCodec } from '../../src/db/cursor.js';
import { ensureTable } from '../../src/db/ensureTable.js';
import { startApp } from './app.js';
import { waitUntil } from './waitUntil.js';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '2000' } } });
const cycles = Number(values.cycles);
const endpoint = process.env.DYNAMODB_ENDPOINT;
if (!endpoint || !Number.isInteger(cycles) || cycles < 1) {
  console.error('usage: DYNAMODB_ENDPOINT=http://host:port subscriptionCycles.ts --cycles <n>');
  process.exit(2);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const auth = { secret: 'cycles-jwt-secret', issuer: 'tablegraph-local', audience: 'tablegraph' };
const tableName = `cycles-${randomUUID()}`;
const dynamo = createDynamo({ endpoint, region: 'us-east-1' });
await ensureTable(dynamo.client, tableName, endpoint);
const app = await startApp({
  host: '127.0.0.1',
  port: 0,
  data: { dynamo, tableName, cursors: new CursorCodec('cycles-cursor-secret') },
  log: pino({ level: 'silent' }),
  auth,
  playground: false,
});
const client = createClient({
  url: app.url.replace(/^http/, 'ws'),
  webSocketImpl: WebSocket,
  connectionParams: { authorization: `Bearer ${await signToken({ userId: 'ops', role: 'admin' }, auth)}` },
  retryAttempts: 0,
  lazy: false,
});

/** Resolves once `check` holds, looking again after every turn of the event loop; false after `timeoutMs`. */
const until = (check: () => boolean, what: string, timeoutMs = 2000): Promise<boolean> =>
  waitUntil(check, { timeoutMs, intervalMs: 0, what }).catch(() => false);

/** One subscription, completed once the server holds it (and so waits for its first event). */
async function cycle(): Promise<void> {
  const before = app.events.subscriberCount;
  const unsubscribe = client.subscribe(
    { query: 'subscription { orderEvents { type order { orderId } } }' },
    { next: () => undefined, error: () => undefined, complete: () => undefined },
  );
  await until(() => app.events.subscriberCount > before, 'the subscription held');
  unsubscribe();
  // A released subscription is gone within a few turns of the event loop; a leaked one never
  // goes, and the short wait keeps the run bounded.
  await until(() => app.events.subscriberCount <= before, 'the subscription released', 50);
}

const heapMB = () => {
  gc();
  gc();
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10;
};

// Warm-up: caches, JIT, lazily created structures settle before the first measurement.
for (let i = 0; i < 200; i++) await cycle();
const heapBeforeMB = heapMB();
for (let i = 0; i < cycles; i++) await cycle();
await until(() => app.events.subscriberCount === 0, 'no subscription left');
const heapAfterMB = heapMB();
const subscribersLeft = app.events.subscriberCount;

await client.dispose();
await app.stop();
await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
dynamo.client.destroy();
console.log(JSON.stringify({ cycles, heapBeforeMB, heapAfterMB, subscribersLeft }));
