import { integer } from './read.js';
import type { Env } from './read.js';

/** Bounds of the WebSocket transport (graphql-ws); SSE streams share the connection cap. */
export interface WebSocketLimits {
  /** Open sockets per server; more are refused with HTTP 503 at the upgrade. */
  maxSockets: number;
  /** Operations (mostly subscriptions) one socket may run at once. */
  maxOperationsPerSocket: number;
  /** WebSockets and SSE streams one client (a user, else an address) may hold open. */
  maxConnectionsPerClient: number;
  /** Subscriptions one client may run at once, over both transports. */
  maxSubscriptionsPerClient: number;
  /** A socket with no operation for this long after connection_init is closed. */
  idleTimeoutMs: number;
  /** Ping interval; a socket that did not answer the previous ping is dropped. */
  keepAliveMs: number;
  /** Time a client has to send connection_init after opening the socket. */
  connectionInitTimeoutMs: number;
}

/** Subscriptions over WebSocket and Server-Sent Events (the server). */
export interface SubscriptionsConfig {
  websocket: WebSocketLimits;
  /** Recent events held for resuming SSE streams. */
  sseReplayEvents: number;
  /** Recent change events remembered to deliver each change once (EVENT_DEDUPE_WINDOW, a constant). */
  eventDedupeWindow: number;
}

/**
 * How many recent deliveries (a change event, by stream sequence number, on one topic) an
 * instance remembers to deliver each change once: a constant, not a setting. It need only
 * outlast the distance between a change and its repeat (a consumer's fail-over, a checkpoint
 * replay), which no operator can size better than this.
 */
export const EVENT_DEDUPE_WINDOW = 10_000;

export function readWebSocketLimits(env: Env): WebSocketLimits {
  return {
    maxSockets: integer(env, 'WS_MAX_SOCKETS'),
    maxOperationsPerSocket: integer(env, 'WS_MAX_OPERATIONS_PER_SOCKET'),
    maxConnectionsPerClient: integer(env, 'CLIENT_MAX_CONNECTIONS'),
    maxSubscriptionsPerClient: integer(env, 'CLIENT_MAX_SUBSCRIPTIONS'),
    idleTimeoutMs: integer(env, 'WS_IDLE_TIMEOUT_MS'),
    keepAliveMs: integer(env, 'WS_KEEPALIVE_MS'),
    connectionInitTimeoutMs: integer(env, 'WS_CONNECTION_INIT_TIMEOUT_MS'),
  };
}

export function readSubscriptions(env: Env): SubscriptionsConfig {
  return {
    websocket: readWebSocketLimits(env),
    sseReplayEvents: integer(env, 'SSE_REPLAY_EVENTS'),
    eventDedupeWindow: EVENT_DEDUPE_WINDOW,
  };
}

const DEFAULTS = readSubscriptions({});
/** SSE_REPLAY_EVENTS's default. */
export const DEFAULT_SSE_REPLAY_EVENTS: number = DEFAULTS.sseReplayEvents;
/** EVENT_DEDUPE_WINDOW, by the name the fan-out takes its default from. */
export const DEFAULT_EVENT_DEDUPE_WINDOW: number = EVENT_DEDUPE_WINDOW;

/** The WebSocket bounds of an empty environment: the spec's defaults. */
export const DEFAULT_WEBSOCKET_LIMITS: WebSocketLimits = readWebSocketLimits({});
