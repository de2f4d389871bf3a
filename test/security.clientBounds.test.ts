/**
 * One client cannot hold a server's streaming transports: a signed-in user (else an address)
 * holds at most CLIENT_MAX_CONNECTIONS WebSockets and SSE streams together, and runs at most
 * CLIENT_MAX_SUBSCRIPTIONS subscriptions over both, while another client is still served. HTTP and
 * the Lambda hold nothing open between requests, so the bound is about these two transports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_WEBSOCKET_LIMITS } from '../src/config/index.js';
import { startTestServer, tokenFor } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { RawSocket } from './support/transports.js';

const MAX_CONNECTIONS = 3;
const MAX_SUBSCRIPTIONS = 4;
const WATCH = { query: 'subscription { orderEvents { type } }' };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    websocket: {
      ...DEFAULT_WEBSOCKET_LIMITS,
      maxConnectionsPerClient: MAX_CONNECTIONS,
      maxSubscriptionsPerClient: MAX_SUBSCRIPTIONS,
    },
    // As behind one load balancer: the client's address is the last one of X-Forwarded-For.
    trustProxyHops: 1,
  });
});
afterAll(async () => {
  await server.stop();
});

/** Something a client holds open, or the refusal it got instead. */
type Opened = { held: true; close(): Promise<void> } | { held: false; refusal: { status: number; code: unknown } };

/** A WebSocket that has been acknowledged, watching orderEvents when `watch` says so. */
async function openWebSocket(token: string | undefined, headers: Record<string, string> = {}): Promise<Opened> {
  const socket = new WebSocket(server.url.replace(/^http/, 'ws'), 'graphql-transport-ws', { headers });
  const upgraded = await new Promise<number | undefined>((resolve) => {
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode));
    socket.once('open', () => resolve(undefined));
  });
  if (upgraded !== undefined) return { held: false, refusal: { status: upgraded, code: 'upgrade refused' } };
  const raw = RawSocket.wrap(socket);
  raw.send({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} });
  const first = await raw.next();
  if ('closed' in first) return { held: false, refusal: { status: first.closed, code: 'closed' } };
  return {
    held: true,
    close: async () => {
      raw.close();
      await raw.closed;
    },
  };
}

/** An SSE stream of orderEvents, open until closed. */
async function openStream(token: string): Promise<Opened> {
  const abort = new AbortController();
  const response = await fetch(`${server.url}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify(WATCH),
    signal: abort.signal,
  });
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const body = (await response.json()) as { errors: { extensions: { code: unknown } }[] };
    return { held: false, refusal: { status: response.status, code: body.errors[0]?.extensions.code } };
  }
  return {
    held: true,
    close: async () => {
      abort.abort();
      await response.body?.cancel().catch(() => undefined);
    },
  };
}

const OPENERS = { WebSocket: openWebSocket, SSE: openStream } as const;
const REFUSED = { WebSocket: { status: 1008, code: 'closed' }, SSE: { status: 429, code: 'TOO_MANY_CONNECTIONS' } };

const held = (opened: Opened) => {
  if (!opened.held) throw new Error(`refused: ${JSON.stringify(opened.refusal)}`);
  return opened;
};

describe.each(['WebSocket', 'SSE'] as const)('the connections of one user over %s', (transport) => {
  it(`stop at CLIENT_MAX_CONNECTIONS (${MAX_CONNECTIONS}) while another user is served, and free up as they close`, async () => {
    const open = OPENERS[transport];
    const user = await tokenFor(`bound-${transport}`, 'customer');
    const mine = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, async () => held(await open(user))));
    const over = await open(user);
    expect(over).toEqual({ held: false, refusal: REFUSED[transport] });
    const someoneElse = held(await open(await tokenFor(`other-${transport}`, 'customer')));
    await mine[0]?.close();
    const again = held(await open(user));
    for (const opened of [...mine.slice(1), someoneElse, again]) await opened.close();
  });
});

it('counts WebSockets and SSE streams of one user together', async () => {
  const user = await tokenFor('bound-mixed', 'customer');
  const sockets = [held(await openWebSocket(user)), held(await openWebSocket(user))];
  const stream = held(await openStream(user));
  expect(await openStream(user)).toEqual({ held: false, refusal: REFUSED.SSE });
  expect(await openWebSocket(user)).toEqual({ held: false, refusal: REFUSED.WebSocket });
  for (const opened of [...sockets, stream]) await opened.close();
});

it(`stops one user's subscriptions at CLIENT_MAX_SUBSCRIPTIONS (${MAX_SUBSCRIPTIONS}), across sockets and streams`, async () => {
  const subscribers = () => server.app.events.subscriberCount;
  await expect.poll(subscribers).toBe(0);
  const user = await tokenFor('bound-subscriptions', 'customer');
  const [a, b] = await Promise.all([RawSocket.open(server.url, user), RawSocket.open(server.url, user)]);
  if (!a || !b) throw new Error('no sockets');
  for (const socket of [a, b]) expect(await socket.next()).toMatchObject({ type: 'connection_ack' });
  a.subscribe('1', WATCH);
  a.subscribe('2', WATCH);
  b.subscribe('3', WATCH);
  const stream = held(await openStream(user));
  await expect.poll(subscribers).toBe(MAX_SUBSCRIPTIONS);
  // The fifth is refused on the socket that asked, with the setting named.
  b.subscribe('4', WATCH);
  expect(await b.next()).toMatchObject({
    id: '4',
    type: 'error',
    payload: [{ extensions: { code: 'TOO_MANY_OPERATIONS', limit: 'CLIENT_MAX_SUBSCRIPTIONS' } }],
  });
  // A completed one frees its place.
  a.send({ id: '1', type: 'complete' });
  await expect.poll(subscribers).toBe(MAX_SUBSCRIPTIONS - 1);
  b.subscribe('5', WATCH);
  await expect.poll(subscribers).toBe(MAX_SUBSCRIPTIONS);
  b.subscribe('6', WATCH);
  expect(await b.next()).toMatchObject({
    id: '6',
    type: 'error',
    payload: [{ extensions: { code: 'TOO_MANY_OPERATIONS' } }],
  });
  a.close();
  b.close();
  await Promise.all([a.closed, b.closed]);
  await stream.close();
});

describe('anonymous clients', () => {
  const from = (address: string) => ({ 'x-forwarded-for': address });

  it('are counted by the address the proxy saw, from the upgrade on', async () => {
    const mine = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS }, async () => held(await openWebSocket(undefined, from('203.0.113.5')))),
    );
    const refusedAtUpgrade = { held: false, refusal: { status: 429, code: 'upgrade refused' } };
    expect(await openWebSocket(undefined, from('203.0.113.5'))).toEqual(refusedAtUpgrade);
    const other = held(await openWebSocket(undefined, from('203.0.113.6')));
    for (const opened of [...mine, other]) await opened.close();
  });

  it('leave the address its place once a socket signs in: a signed-in socket counts against its user', async () => {
    const address = from('203.0.113.7');
    const user = await tokenFor('behind-a-nat', 'customer');
    const signedIn = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS }, async () => held(await openWebSocket(user, address))),
    );
    const anonymous = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS }, async () => held(await openWebSocket(undefined, address))),
    );
    expect(await openWebSocket(undefined, address)).toMatchObject({ held: false, refusal: { status: 429 } });
    for (const opened of [...signedIn, ...anonymous]) await opened.close();
  });
});

it('releases everything a client held once its sockets and streams are gone', async () => {
  const holding = async () => {
    const text = await (await fetch(server.url.replace(/graphql$/, 'metrics'))).text();
    return Number(/^tablegraph_clients_holding (\d+)/m.exec(text)?.[1]);
  };
  await expect.poll(holding, { timeout: 5000 }).toBe(0);
});
