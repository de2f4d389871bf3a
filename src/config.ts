import os from 'node:os';
import path from 'node:path';

/** How tokens are verified (src/auth/tokens.ts). */
export interface AuthConfig {
  /** HS256 shared secret (local use). */
  secret?: string | undefined;
  /** JWKS URL (production): asymmetric keys, issuer and audience required. */
  jwksUrl?: string | undefined;
  issuer: string;
  audience: string;
  /** JWT_MAX_AGE: a token older than this (by its `iat`) is refused, whatever its `exp` (default 24 h). */
  maxAgeSeconds?: number | undefined;
}

/** Where the server finds DynamoDB: see the README's configuration table. */
export type DynamoMode = 'embedded' | 'endpoint' | 'aws';

/**
 * The whole configuration, from the environment (loadConfig). Variables added for resource
 * bounds and exposure (each described at its field):
 * - `MAX_RESPONSE_BYTES` (limits.maxResponseBytes), `MAX_QUERY_COST` (limits.maxCost, now counting every list),
 * - `JWT_MAX_AGE` (auth.maxAgeSeconds), `METRICS_TOKEN` and `METRICS_PORT` (metrics),
 * - `HTTP_REQUEST_TIMEOUT_MS`, `HTTP_HEADERS_TIMEOUT_MS`, `HTTP_KEEP_ALIVE_TIMEOUT_MS`, `MAX_CONNECTIONS` (http),
 * - `COST_DETAILS` (costDetails), and `HOST`'s default of 127.0.0.1 outside production.
 */
export interface Config {
  /** HOST: where the HTTP server listens. Default 127.0.0.1 (this machine only) outside production, 0.0.0.0 in production. */
  host: string;
  port: number;
  dataDir: string;
  tableName: string;
  mode: DynamoMode;
  /** Set in `endpoint` mode; the embedded mode fills it in once DynamoDB Local listens. */
  endpoint: string | undefined;
  region: string;
  cursorSecret: string;
  nodeEnv: string;
  logLevel: string;
  auth: AuthConfig;
  limits: QueryLimits;
  sockets: SocketLimits;
  /** Schema introspection (on in development; off in production unless GRAPHQL_INTROSPECTION=true). */
  introspection: boolean;
  /** The GraphiQL page (on in development; off in production unless PLAYGROUND=true). */
  playground: boolean;
  /** Accept only the documents of the persisted-documents manifest (PERSISTED_ONLY=true). */
  persistedOnly: boolean;
  /** On SIGTERM, how long in-flight requests may take before their connections are closed. */
  shutdownGraceMs: number;
  /** The in-process stream consumer: on by default, off in aws mode (use the Lambda handler there) and with REDIS_URL. */
  streamConsumer: boolean;
  /** Names the consumer's checkpoints: one name per server instance (default: the host name). */
  streamConsumerName: string;
  /** REDIS_URL: order events travel over Redis pub/sub instead of staying in the process. */
  redisUrl: string | undefined;
  /** `npm run consumer`: the checkpoints and leases its consumers share (STREAM_CONSUMER_NAME, default `processor`). */
  consumerGroup: string;
  /** `npm run consumer`: the port of its /healthz and /metrics (0 picks a free one). */
  consumerPort: number;
  /** `npm run consumer`: how long a shard lease lasts without a heartbeat. */
  leaseTtlMs: number;
  /** `npm run consumer`: pause between polls of an idle stream. */
  streamPollMs: number;
  /**
   * /metrics access. METRICS_TOKEN: when set, a scraper sending `Authorization: Bearer <token>`
   * may read /metrics from anywhere (loopback clients always may). METRICS_PORT: serve /metrics
   * on a port of its own instead of the main one (unset: the main port).
   */
  metrics: { token: string | undefined; port: number | undefined };
  /**
   * Socket bounds. HTTP_REQUEST_TIMEOUT_MS (30000): a whole request must arrive within it;
   * HTTP_HEADERS_TIMEOUT_MS (10000): its headers; HTTP_KEEP_ALIVE_TIMEOUT_MS (5000): an idle
   * keep-alive connection closes; MAX_CONNECTIONS (1000): open sockets, WebSockets included.
   */
  http: { requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number; maxConnections: number };
  /**
   * COST_DETAILS: who sees capacity units in `extensions.cost.dynamodb`. `admin` (default):
   * admins only, others get the request count alone (capacity units would tell another user's
   * data from missing data); `all`: every caller (benchmarks, local debugging).
   */
  costDetails: 'admin' | 'all';
  /**
   * Read a user with the first page of their orders in one Query (ITEM_COLLECTION_READS,
   * default true; docs/performance.md). Off only to measure what it saves.
   */
  itemCollections: boolean;
}

/** Query limits (README "Security"); each has an environment variable. */
export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
  maxTokens: number;
  /** Estimated cost: connection sizes multiply their selections (see src/pipeline/queryCost.ts). */
  maxCost: number;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /** MAX_RESPONSE_BYTES (4,000,000): largest response, in bytes of JSON; a larger answer is replaced by RESPONSE_TOO_LARGE. */
  maxResponseBytes: number;
}

/** Bounds of the WebSocket transport (graphql-ws); each has an environment variable. */
export interface SocketLimits {
  /** Open sockets per server; more are refused with HTTP 503 at the upgrade. */
  maxSockets: number;
  /** Operations (mostly subscriptions) one socket may run at once. */
  maxOperationsPerSocket: number;
  /** A socket with no operation for this long after connection_init is closed. */
  idleTimeoutMs: number;
  /** Ping interval; a socket that did not answer the previous ping is dropped. */
  keepAliveMs: number;
  /** Time a client has to send connection_init after opening the socket. */
  connectionInitTimeoutMs: number;
}

export const DEFAULT_SOCKET_LIMITS: SocketLimits = {
  maxSockets: 10_000,
  maxOperationsPerSocket: 25,
  idleTimeoutMs: 60_000,
  keepAliveMs: 30_000,
  connectionInitTimeoutMs: 3_000,
};

export const DEFAULT_LIMITS: QueryLimits = {
  maxDepth: 12,
  maxAliases: 15,
  maxDirectives: 10,
  maxTokens: 2000,
  maxCost: 20_000,
  maxBodyBytes: 100_000,
  maxResponseBytes: 4_000_000,
};

/** Thrown for a configuration the server refuses to start with; main prints only its message. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DEV_CURSOR_SECRET = 'tablegraph-development-cursor-secret';
/** Signs local tokens outside production; printed nowhere, and refused by production mode. */
export const DEV_JWT_SECRET = 'tablegraph-development-jwt-secret';

function parseCount(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

const flag = (env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean =>
  env[name] === undefined || env[name] === '' ? fallback : env[name] === 'true' || env[name] === '1';

function parsePort(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`${name} must be an integer between 0 and 65535, got "${raw}"`);
  }
  return port;
}

/**
 * Reads the configuration from the environment. Throws ConfigError for a value it cannot
 * use (a bad port, an unknown DYNAMODB_MODE, production without CURSOR_SECRET).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const nodeEnv = env.NODE_ENV ?? 'development';
  const endpoint = env.DYNAMODB_ENDPOINT || undefined;
  const rawMode = env.DYNAMODB_MODE || (endpoint ? 'endpoint' : 'embedded');
  if (rawMode !== 'embedded' && rawMode !== 'endpoint' && rawMode !== 'aws') {
    throw new ConfigError(`DYNAMODB_MODE must be embedded, endpoint or aws, got "${rawMode}"`);
  }
  if (rawMode === 'embedded' && nodeEnv === 'production') {
    // DynamoDB Local has no authentication and no durability guarantees: never a production store.
    throw new ConfigError(
      'NODE_ENV=production refuses the embedded DynamoDB Local: set DYNAMODB_MODE=aws, or DYNAMODB_ENDPOINT=http://host:port',
    );
  }
  if (rawMode === 'endpoint' && !endpoint) {
    throw new ConfigError('DYNAMODB_MODE=endpoint needs DYNAMODB_ENDPOINT=http://host:port');
  }
  const cursorSecret = env.CURSOR_SECRET || (nodeEnv === 'production' ? '' : DEV_CURSOR_SECRET);
  if (!cursorSecret) {
    throw new ConfigError('NODE_ENV=production needs CURSOR_SECRET (a long random string that signs page cursors)');
  }
  const production = nodeEnv === 'production';
  const jwksUrl = env.JWT_JWKS_URL || undefined;
  const jwtSecret = env.JWT_SECRET || (production || jwksUrl ? undefined : DEV_JWT_SECRET);
  if (production && !jwtSecret && !jwksUrl) {
    throw new ConfigError('NODE_ENV=production needs JWT_SECRET or JWT_JWKS_URL (with JWT_ISSUER and JWT_AUDIENCE)');
  }
  if (jwksUrl && (!env.JWT_ISSUER || !env.JWT_AUDIENCE)) {
    throw new ConfigError('JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE: tokens are checked against both');
  }
  if (production && jwtSecret && (jwtSecret.length < 32 || jwtSecret === DEV_JWT_SECRET)) {
    throw new ConfigError('JWT_SECRET must be at least 32 characters in production, and not the development secret');
  }
  if (production && env.CURSOR_SECRET === DEV_CURSOR_SECRET) {
    throw new ConfigError('CURSOR_SECRET must not be the development secret in production');
  }
  const tableName = env.TABLE_NAME || 'MainTable';
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL (e.g. redis://127.0.0.1:6379)');
  }
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new ConfigError(`TABLE_NAME must be 3-255 characters of A-Z a-z 0-9 _ . -, got "${tableName}"`);
  }
  const costDetails = env.COST_DETAILS || 'admin';
  if (costDetails !== 'admin' && costDetails !== 'all') {
    throw new ConfigError(`COST_DETAILS must be admin or all, got "${costDetails}"`);
  }
  const metricsPort = env.METRICS_PORT ? parsePort(env.METRICS_PORT, 0, 'METRICS_PORT') : undefined;
  return {
    host: env.HOST || (production ? '0.0.0.0' : '127.0.0.1'),
    port: parsePort(env.PORT, 4000, 'PORT'),
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    tableName,
    mode: rawMode,
    endpoint: rawMode === 'aws' ? undefined : endpoint,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    cursorSecret,
    nodeEnv,
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
    auth: {
      secret: jwksUrl ? undefined : jwtSecret,
      jwksUrl,
      issuer: env.JWT_ISSUER || 'tablegraph-local',
      audience: env.JWT_AUDIENCE || 'tablegraph',
      maxAgeSeconds: parseDuration(env, 'JWT_MAX_AGE', DEFAULT_JWT_MAX_AGE_SECONDS),
    },
    limits: {
      maxDepth: parseCount(env, 'MAX_QUERY_DEPTH', DEFAULT_LIMITS.maxDepth),
      maxAliases: parseCount(env, 'MAX_QUERY_ALIASES', DEFAULT_LIMITS.maxAliases),
      maxDirectives: parseCount(env, 'MAX_QUERY_DIRECTIVES', DEFAULT_LIMITS.maxDirectives),
      maxTokens: parseCount(env, 'MAX_QUERY_TOKENS', DEFAULT_LIMITS.maxTokens),
      maxCost: parseCount(env, 'MAX_QUERY_COST', DEFAULT_LIMITS.maxCost),
      maxBodyBytes: parseCount(env, 'MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes),
      maxResponseBytes: parseCount(env, 'MAX_RESPONSE_BYTES', DEFAULT_LIMITS.maxResponseBytes),
    },
    sockets: {
      maxSockets: parseCount(env, 'WS_MAX_SOCKETS', DEFAULT_SOCKET_LIMITS.maxSockets),
      maxOperationsPerSocket: parseCount(
        env,
        'WS_MAX_OPERATIONS_PER_SOCKET',
        DEFAULT_SOCKET_LIMITS.maxOperationsPerSocket,
      ),
      idleTimeoutMs: parseCount(env, 'WS_IDLE_TIMEOUT_MS', DEFAULT_SOCKET_LIMITS.idleTimeoutMs),
      keepAliveMs: parseCount(env, 'WS_KEEPALIVE_MS', DEFAULT_SOCKET_LIMITS.keepAliveMs),
      connectionInitTimeoutMs: parseCount(
        env,
        'WS_CONNECTION_INIT_TIMEOUT_MS',
        DEFAULT_SOCKET_LIMITS.connectionInitTimeoutMs,
      ),
    },
    introspection: flag(env, 'GRAPHQL_INTROSPECTION', !production),
    playground: flag(env, 'PLAYGROUND', !production),
    persistedOnly: flag(env, 'PERSISTED_ONLY', false),
    shutdownGraceMs: parseCount(env, 'SHUTDOWN_GRACE_MS', 10_000),
    // With Redis, the events come from `npm run consumer` or the Lambda: an in-process consumer
    // in every instance would publish each event once per instance.
    streamConsumer: flag(env, 'STREAM_CONSUMER', rawMode !== 'aws' && !redisUrl),
    redisUrl,
    consumerGroup: env.STREAM_CONSUMER_NAME || 'processor',
    consumerPort: parsePort(env.CONSUMER_PORT, 9464, 'CONSUMER_PORT'),
    leaseTtlMs: parseCount(env, 'LEASE_TTL_MS', 10_000),
    streamPollMs: parseCount(env, 'STREAM_POLL_MS', 200),
    itemCollections: flag(env, 'ITEM_COLLECTION_READS', true),
    streamConsumerName:
      env.STREAM_CONSUMER_NAME ||
      os
        .hostname()
        .replace(/[^A-Za-z0-9_-]/g, '-')
        .slice(0, 64) ||
      'default',
    metrics: { token: env.METRICS_TOKEN || undefined, port: metricsPort },
    http: {
      requestTimeoutMs: parseCount(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000),
      headersTimeoutMs: parseCount(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000),
      keepAliveTimeoutMs: parseCount(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000),
      maxConnections: parseCount(env, 'MAX_CONNECTIONS', 1_000),
    },
    costDetails,
  };
}

/** JWT_MAX_AGE's default: a day. */
export const DEFAULT_JWT_MAX_AGE_SECONDS = 24 * 60 * 60;

const DURATION_UNITS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration in seconds: `3600`, `90s`, `30m`, `24h` or `7d`. */
function parseDuration(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^(\d+)\s*(s|m|h|d)?$/.exec(raw.trim());
  const seconds = match ? Number(match[1]) * (DURATION_UNITS[match[2] ?? ''] ?? 1) : NaN;
  if (!Number.isInteger(seconds) || seconds < 1) {
    throw new ConfigError(`${name} must be a duration such as 3600, 30m or 24h, got "${raw}"`);
  }
  return seconds;
}
