/**
 * Helpers for tests on a deployment of child processes: /metrics and /readyz read as
 * values, and graphql-ws subscribers that record the orders (or other nodes) they hear of and
 * let a test await them (never sleep).
 */
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { ChildServer } from './childServers.js';
import { waitUntil } from './waitUntil.js';

export interface Subscriber {
  name: string;
  api: ChildServer;
  received: Set<string>;
  /** performance.now() at the first receipt of each order's event. */
  receivedAt: Map<string, number>;
  closed: boolean;
  /** The code of the error that ended the subscription, if one did. */
  endedWith: string | undefined;
  /** Resolves once every one of `orderIds` has arrived. */
  waitFor(orderIds: string[], timeoutMs?: number): Promise<void>;
}

export async function metricsOf(server: ChildServer): Promise<Map<string, number>> {
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (match) values.set(match[1] as string, (values.get(match[1] as string) ?? 0) + Number(match[2]));
  }
  return values;
}
export const metric = async (server: ChildServer, name: string) => (await metricsOf(server)).get(name) ?? 0;

/** A standalone consumer's /readyz details: its leases and its event bus. */
export async function health(server: ChildServer): Promise<{ leasesHeld: number; eventBus: { status: string } }> {
  return ((await (await fetch(`${server.origin}/readyz`)).json()) as { details: never }).details;
}

export async function readyDetails(api: ChildServer): Promise<{ status: number; eventBus: string }> {
  const response = await fetch(`${api.origin}/readyz`);
  const body = (await response.json()) as { details: { eventBus: { status: string } } };
  return { status: response.status, eventBus: body.details.eventBus.status };
}

/** The order id of an `orderEvents` result: what a subscriber records by default. */
const orderIdIn = (data: Record<string, any> | null | undefined): string | undefined =>
  data?.orderEvents?.order?.orderId as string | undefined;

/**
 * Subscribes over graphql-ws (anonymously without a token) and resolves once the instance
 * counts the subscription; `idOf` says which id of each result to record.
 */
export async function subscribe(
  clients: Client[],
  name: string,
  api: ChildServer,
  token: string | undefined,
  query: string,
  idOf: (data: Record<string, any> | null | undefined) => string | undefined = orderIdIn,
): Promise<Subscriber> {
  const before = await metric(api, 'graphql_subscriptions_active');
  const client = createClient({
    url: api.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
  clients.push(client);
  const received = new Set<string>();
  const receivedAt = new Map<string, number>();
  const waiters = new Set<() => void>();
  const subscriber: Subscriber = {
    name,
    api,
    received,
    receivedAt,
    closed: false,
    endedWith: undefined,
    waitFor: (orderIds, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!orderIds.every((id) => received.has(id))) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const missing = orderIds.filter((id) => !received.has(id));
          reject(
            new Error(`${name}: ${missing.length} order event(s) missing after ${timeoutMs} ms: ${missing.join(', ')}`),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
      }),
  };
  client.on('closed', () => (subscriber.closed = true));
  client.subscribe<Record<string, any>>(
    { query },
    {
      next: (result) => {
        const orderId = idOf(result.data);
        if (orderId && !received.has(orderId)) {
          received.add(orderId);
          receivedAt.set(orderId, performance.now());
        }
        for (const waiter of [...waiters]) waiter();
      },
      error: (error) => {
        subscriber.closed = true;
        const errors = Array.isArray(error) ? (error as { extensions?: { code?: string } }[]) : [];
        subscriber.endedWith = errors[0]?.extensions?.code ?? 'error';
      },
      complete: () => (subscriber.closed = true),
    },
  );
  await waitUntil(async () => (await metric(api, 'graphql_subscriptions_active')) > before, {
    timeoutMs: 10_000,
    intervalMs: 50,
    what: `${name} registered`,
  });
  return subscriber;
}
