import type { VarSpec } from './varSpec.js';

/** Subscriptions over WebSocket and Server-Sent Events: socket bounds and event delivery. */
export const SUBSCRIPTIONS_SPEC = {
  WS_MAX_SOCKETS: {
    type: 'integer',
    default: '10000',
    description: 'open WebSockets per server; more are refused with 503 at the upgrade',
    readBy: ['server'],
  },
  WS_MAX_OPERATIONS_PER_SOCKET: {
    type: 'integer',
    default: '25',
    description: 'operations (mostly subscriptions) one socket may run at once',
    readBy: ['server'],
  },
  CLIENT_MAX_CONNECTIONS: {
    type: 'integer',
    default: '32',
    description:
      'WebSockets and Server-Sent Events streams one client may hold open on one server: a signed-in user, else one address (`TRUST_PROXY_HOPS`); more are refused (`TOO_MANY_CONNECTIONS`)',
    readBy: ['server'],
  },
  CLIENT_MAX_SUBSCRIPTIONS: {
    type: 'integer',
    default: '100',
    description:
      'subscriptions one client may run at once on one server, over WebSockets and Server-Sent Events together; more are refused (`TOO_MANY_OPERATIONS`)',
    readBy: ['server'],
  },
  WS_IDLE_TIMEOUT_MS: {
    type: 'integer',
    default: '60000',
    description: 'a socket with no operation for this long after `connection_init` is closed',
    readBy: ['server'],
  },
  WS_KEEPALIVE_MS: {
    type: 'integer',
    default: '30000',
    description: 'ping interval; a socket that did not answer the previous ping is dropped',
    readBy: ['server'],
  },
  WS_CONNECTION_INIT_TIMEOUT_MS: {
    type: 'integer',
    default: '3000',
    description: 'time a client has to send `connection_init` after opening the socket',
    readBy: ['server'],
  },
  SSE_REPLAY_EVENTS: {
    type: 'integer',
    default: '1000',
    description:
      'recent change events an instance without Redis holds so that a Server-Sent Events stream resuming with `Last-Event-ID` receives what it missed (with `REDIS_URL`, each topic keeps a history of about 1000 in Redis instead); older gaps get `EVENTS_MISSED` (refetch)',
    readBy: ['server'],
  },
} as const satisfies Record<string, VarSpec>;
