import type { ProcessConfig } from './process.js';
import { count, flag, integer, oneOf, origins, port, text } from './read.js';
import type { Env } from './read.js';

/** Bounds on what one slow or idle client can hold (docs/security.md). */
export interface HttpLimits {
  /** A request (headers and body) must arrive within this time, else 408 and the socket closes. */
  requestTimeoutMs: number;
  /** The headers must arrive within this time. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection closes after this time. */
  keepAliveTimeoutMs: number;
  /** Open connections (HTTP and WebSocket) at most; further ones are closed at once. */
  maxConnections: number;
}

/** A process that listens for HTTP (the server, and the consumer's health and metrics port). */
export interface ListenerConfig {
  /** The interface it binds: this machine only outside production, every interface in production. */
  host: string;
  /** A scraper sending `Authorization: Bearer <token>` may read /metrics from anywhere (loopback always may). */
  metrics: { token: string | undefined };
}

export function readListener(env: Env, { nodeEnv }: Pick<ProcessConfig, 'nodeEnv'>): ListenerConfig {
  return {
    host: text(env, 'HOST') ?? (nodeEnv === 'production' ? '0.0.0.0' : '127.0.0.1'),
    metrics: { token: text(env, 'METRICS_TOKEN') },
  };
}

/** The HTTP server process (`npm start`). */
export interface ServerConfig {
  host: string;
  port: number;
  /** JSON lines or pino-pretty; undefined: pretty on a terminal outside production (logger.ts). */
  logFormat: 'json' | 'pretty' | undefined;
  /** Write the demo data on the first start (never in aws mode). */
  seedDemoData: boolean;
  /** The GraphiQL page. */
  playground: boolean;
  /** Browser origins allowed by CORS and WebSocket upgrades. */
  corsOrigins: string[];
  /** /metrics access, and its own port (undefined: the main port). */
  metrics: { token: string | undefined; port: number | undefined };
  http: HttpLimits;
  /** Proxies in front that append to X-Forwarded-For: the client's address is the one the outermost saw. */
  trustProxyHops: number;
  /** On SIGTERM, how long in-flight requests may take before their connections are closed. */
  shutdownGraceMs: number;
}

export function readHttpLimits(env: Env): HttpLimits {
  return {
    requestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS'),
    headersTimeoutMs: integer(env, 'HTTP_HEADERS_TIMEOUT_MS'),
    keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'),
    maxConnections: integer(env, 'MAX_CONNECTIONS'),
  };
}

export function readServer(env: Env, { nodeEnv }: Pick<ProcessConfig, 'nodeEnv'>): ServerConfig {
  const listener = readListener(env, { nodeEnv });
  const production = nodeEnv === 'production';
  return {
    host: listener.host,
    port: port(env, 'PORT'),
    logFormat: oneOf(env, 'LOG_FORMAT'),
    seedDemoData: flag(env, 'SEED_DEMO_DATA'),
    playground: flag(env, 'PLAYGROUND') ?? !production,
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    metrics: { ...listener.metrics, port: port(env, 'METRICS_PORT') },
    http: readHttpLimits(env),
    trustProxyHops: count(env, 'TRUST_PROXY_HOPS'),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS'),
  };
}

/** The socket bounds of an empty environment: the spec's defaults. */
export const DEFAULT_HTTP_LIMITS: HttpLimits = readHttpLimits({});
/** SHUTDOWN_GRACE_MS's default. */
export const DEFAULT_SHUTDOWN_GRACE_MS: number = integer({}, 'SHUTDOWN_GRACE_MS');
