/**
 * What one client may hold open on one server: WebSockets and Server-Sent Events streams
 * (CLIENT_MAX_CONNECTIONS) and subscriptions (CLIENT_MAX_SUBSCRIPTIONS), whichever of the two
 * streaming transports carries them. Without it one customer could open as many streams as the
 * server has sockets (each lives until its token expires) and starve every other client.
 *
 * A client is a signed-in user (by the token's user id), else an address: the peer of the socket,
 * or, behind proxies that append to X-Forwarded-For, the address the outermost trusted one saw
 * (TRUST_PROXY_HOPS). IPv6 addresses count by their /64, which one host usually holds whole.
 *
 * The WebSocket and SSE transports take a `Hold` for each connection and each subscription and
 * release it when it ends; a refusal is a coded GraphQL error with HTTP status 429. One instance
 * per server, shared by both transports; it tracks only clients that hold something, so its
 * memory follows the open sockets, which the per-server caps bound. The bounds are per server:
 * behind a load balancer a client may hold them on each instance.
 */
import net from 'node:net';
import { GraphQLError } from 'graphql';
import type { Viewer } from '../../auth/tokens.js';
import { ErrorCode } from '../../errors.js';

export interface ClientLimits {
  /** WebSockets and SSE streams one client may hold open (CLIENT_MAX_CONNECTIONS). */
  maxConnectionsPerClient: number;
  /** Subscriptions one client may run at once (CLIENT_MAX_SUBSCRIPTIONS). */
  maxSubscriptionsPerClient: number;
}

export type HoldKind = 'connection' | 'subscription';

/** Something a client holds open; `release()` gives it back, once, however often it is called. */
export interface Hold {
  release(): void;
}

const SETTING: Record<HoldKind, string> = {
  connection: 'CLIENT_MAX_CONNECTIONS',
  subscription: 'CLIENT_MAX_SUBSCRIPTIONS',
};

/** A connection or subscription over the client's bound (HTTP 429). */
export class ClientLimitError extends GraphQLError {
  constructor(kind: HoldKind, maximum: number) {
    super(
      kind === 'connection'
        ? `Too many open connections: a client may hold ${maximum} WebSockets and event streams at once on this server; close one first`
        : `Too many subscriptions: a client may run ${maximum} at once on this server; complete one first`,
      {
        extensions: {
          code: kind === 'connection' ? ErrorCode.TOO_MANY_CONNECTIONS : ErrorCode.TOO_MANY_OPERATIONS,
          limit: SETTING[kind],
          maximum,
          http: { status: 429 },
        },
      },
    );
  }
}

/** The /64 of an IPv6 address (its first four groups), the address itself for IPv4. */
function addressKey(address: string): string {
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (!net.isIPv6(plain)) return plain;
  const [head = '', tail] = plain.toLowerCase().split('::');
  const front = head ? head.split(':') : [];
  const back = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The client's address: the socket's peer with `hops` = 0; else, reading X-Forwarded-For from
 * the right (each proxy appends the address it saw), the address the `hops`-th proxy saw, or the
 * leftmost one when the header names fewer. As Express's `trust proxy` with a hop count reads it.
 */
export function clientAddressOf(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  hops: number,
): string {
  const forwarded = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const chain = [socketAddress ?? 'unknown', ...forwarded.reverse()];
  return addressKey(chain[Math.min(hops, chain.length - 1)] as string);
}

/** Who a client is, for the bounds: the signed-in user, else the address. */
export const clientOf = (viewer: Viewer | null, address: string): string =>
  viewer ? `user:${viewer.userId}` : `address:${address}`;

/**
 * The events of a subscription, releasing `hold` the moment the subscription ends: its last
 * event, a failure, or a `return()` (a client's complete, a closed socket). The release comes
 * before anything else the end does, so a client that completes one subscription may open
 * another with its very next message.
 */
export function releasedAtEnd<T>(events: AsyncIterable<T>, hold: Hold): AsyncIterableIterator<T> {
  const iterator = events[Symbol.asyncIterator]();
  const ended = (result: IteratorResult<T>) => {
    if (result.done) hold.release();
    return result;
  };
  const failed = (error: unknown): never => {
    hold.release();
    throw error;
  };
  return {
    next: () => iterator.next().then(ended, failed),
    return: (value?: unknown) => {
      hold.release();
      return iterator.return ? iterator.return(value) : Promise.resolve({ done: true, value: undefined });
    },
    throw: (error?: unknown) => {
      hold.release();
      return iterator.throw
        ? iterator.throw(error)
        : Promise.reject(error instanceof Error ? error : new Error(String(error)));
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

export function createClientBounds(limits: ClientLimits) {
  const held = new Map<string, Record<HoldKind, number>>();
  const maximum: Record<HoldKind, number> = {
    connection: limits.maxConnectionsPerClient,
    subscription: limits.maxSubscriptionsPerClient,
  };
  const refusals: Record<HoldKind, number> = { connection: 0, subscription: 0 };

  return {
    /** One more connection or subscription for `client`, or the refusal when it holds its bound. */
    hold(client: string, kind: HoldKind): Hold | ClientLimitError {
      let counts = held.get(client);
      if ((counts?.[kind] ?? 0) >= maximum[kind]) {
        refusals[kind] += 1;
        return new ClientLimitError(kind, maximum[kind]);
      }
      if (!counts) held.set(client, (counts = { connection: 0, subscription: 0 }));
      counts[kind] += 1;
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          const now = held.get(client);
          if (!now) return;
          now[kind] -= 1;
          if (now.connection === 0 && now.subscription === 0) held.delete(client);
        },
      };
    },
    /** What `client` holds now. */
    heldBy(client: string): Record<HoldKind, number> {
      return { ...(held.get(client) ?? { connection: 0, subscription: 0 }) };
    },
    /** Clients holding something now. */
    get clients(): number {
      return held.size;
    },
    /** Holds refused since start, by kind (a metric). */
    refusals,
  };
}

export type ClientBounds = ReturnType<typeof createClientBounds>;
