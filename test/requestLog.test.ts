/**
 * The request's log line ("graphql request") on every transport of the server: its fields, in
 * the order a child logger of the request would have written them (the request, the viewer, then
 * the line's own), for an executed operation and for a refusal. The report writes the line with
 * the server's logger and the request's fields, without making a child logger for it. A
 * subscription's event is written at debug: one event can reach thousands of subscriptions.
 */
import { Writable } from 'node:stream';
import { createClient } from 'graphql-ws';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { anOrder, anOrderEvent, aProduct, aUser } from './support/factories.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { SseStream } from './support/sseStream.js';
import { transportsOf } from './support/transports.js';
import type { Transports } from './support/transports.js';

type Line = Record<string, unknown>;
const lines: Line[] = [];
const out = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as Line);
    done();
  },
});

let server: TestServer;
let transports: Transports;
beforeAll(async () => {
  server = await startTestServer({ playground: false, log: pino({ level: 'debug' }, out) });
  await putItems(server.dynamo.doc, server.tableName, demoItems());
  transports = await transportsOf(server);
});
afterAll(async () => {
  transports?.stop();
  await server?.stop();
});

/** The request line written for the operation named `operationName` since `from`. */
const requestLine = (from: number, operationName: string | null): Line | undefined =>
  lines.slice(from).find((line) => line.msg === 'graphql request' && line.operationName === operationName);

/** A request line's keys, in order: pino's, the request's (a child logger's bindings), the line's own. */
const LINE_KEYS = [
  'level',
  'time',
  'pid',
  'hostname',
  'requestId',
  'viewer',
  'transport',
  'operationName',
  'durationMs',
  'dynamodb',
  'errors',
  'msg',
];

const TRANSPORT_LABELS = { HTTP: 'http', WebSocket: 'ws', SSE: 'sse' } as const;

describe.each(Object.keys(TRANSPORT_LABELS) as (keyof typeof TRANSPORT_LABELS)[])('over %s', (transport) => {
  it('logs an executed operation with its request, viewer, cost and error count', async () => {
    const from = lines.length;
    const token = await tokenFor('log-reader');
    const outcome = await transports.send(
      transport,
      { query: 'query LoggedProduct { product(productId: "tent-2p") { name } }' },
      token,
    );
    expect(outcome.errors).toEqual([]);
    const line = requestLine(from, 'LoggedProduct');
    expect(Object.keys(line ?? {})).toEqual(LINE_KEYS);
    expect(line).toMatchObject({ level: 30, viewer: 'log-reader', transport: TRANSPORT_LABELS[transport], errors: 0 });
    expect(typeof line?.requestId).toBe('string');
    expect(typeof line?.durationMs).toBe('number');
    const dynamodb = line?.dynamodb as Record<string, unknown>;
    expect(Object.keys(dynamodb)).toEqual(['requests', 'readCapacityUnits', 'writeCapacityUnits', 'byOperation']);
    expect(dynamodb.requests).toBeGreaterThanOrEqual(1);
    expect(dynamodb.readCapacityUnits).toBeGreaterThan(0);
    expect(dynamodb.writeCapacityUnits).toBe(0);
  });

  it('logs a refusal without a viewer, with its error count', async () => {
    const from = lines.length;
    const outcome = await transports.send(transport, { query: 'query Refused { nope }' }, null);
    expect(outcome.errors).not.toEqual([]);
    const line = requestLine(from, null);
    expect(line).toMatchObject({ transport: TRANSPORT_LABELS[transport], errors: 1 });
    expect(line).not.toHaveProperty('viewer');
    expect(Object.keys(line ?? {})).toEqual(LINE_KEYS.filter((key) => key !== 'viewer'));
    expect((line?.dynamodb as { requests: number }).requests).toBe(0);
  });
});

it('logs the request id an HTTP client sent', async () => {
  const from = lines.length;
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'client-chosen-id' },
    body: JSON.stringify({ query: 'query LoggedPing { __typename }' }),
  });
  expect(response.headers.get('x-request-id')).toBe('client-chosen-id');
  expect(requestLine(from, 'LoggedPing')).toMatchObject({ requestId: 'client-chosen-id', transport: 'http' });
});

const WATCH = 'subscription LoggedEvents { orderEvents { type order { orderId } } }';
let seq = 10n ** 20n + BigInt(Date.now()) * 1000n;

/** One subscription of `token` to WATCH over `transport`: the order ids it receives, and its end. */
async function watch(transport: 'WebSocket' | 'SSE', token: string): Promise<{ received: string[]; stop: () => void }> {
  const received: string[] = [];
  if (transport === 'WebSocket') {
    const client = createClient({
      url: server.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
    });
    client.subscribe<{ orderEvents: { order: { orderId: string } } }>(
      { query: WATCH },
      {
        next: (result) => received.push(result.data?.orderEvents.order.orderId ?? JSON.stringify(result)),
        error: (error) => received.push(`error ${JSON.stringify(error)}`),
        complete: () => undefined,
      },
    );
    return { received, stop: () => void client.dispose() };
  }
  const stream = await SseStream.open(server.url, token, undefined, WATCH);
  void (async () => {
    for (;;) {
      const event = await stream.next();
      if (event.event !== 'next') continue;
      const payload = JSON.parse(event.data) as { data?: { orderEvents: { order: { orderId: string } } } };
      received.push(payload.data?.orderEvents.order.orderId ?? event.data);
      return;
    }
  })();
  return { received, stop: () => stream.close() };
}

describe.each(['WebSocket', 'SSE'] as const)('a subscription event over %s', (transport) => {
  it("is logged at debug, with the subscription's request and viewer", async () => {
    const user = aUser();
    const before = server.app.events.subscriberCount;
    const { received, stop } = await watch(transport, await tokenFor(user.userId));
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 10_000 }).toBe(before + 1);
    const from = lines.length;
    const order = anOrder(user, [aProduct()]);
    seq += 3n;
    void server.app.events.publish(anOrderEvent(order, seq.toString()));
    await expect.poll(() => received, { timeout: 10_000 }).toEqual([order.orderId]);
    const logged = lines
      .slice(from)
      .filter((line) => line.msg === 'graphql request' && line.operationName === 'LoggedEvents');
    expect(logged).toMatchObject([
      { level: 20, viewer: user.userId, transport: TRANSPORT_LABELS[transport], errors: 0 },
    ]);
    expect(Object.keys(logged[0] ?? {})).toEqual(LINE_KEYS);
    stop();
    await expect.poll(() => server.app.events.subscriberCount, { timeout: 10_000 }).toBe(before);
  });
});
