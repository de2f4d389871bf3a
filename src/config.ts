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
}

/** Where the server finds DynamoDB: see the README's configuration table. */
export type DynamoMode = 'embedded' | 'endpoint' | 'aws';

export interface Config {
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
  maxCost: 5000,
  maxBodyBytes: 100_000,
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
  return {
    host: env.HOST || '0.0.0.0',
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
    },
    limits: {
      maxDepth: parseCount(env, 'MAX_QUERY_DEPTH', DEFAULT_LIMITS.maxDepth),
      maxAliases: parseCount(env, 'MAX_QUERY_ALIASES', DEFAULT_LIMITS.maxAliases),
      maxDirectives: parseCount(env, 'MAX_QUERY_DIRECTIVES', DEFAULT_LIMITS.maxDirectives),
      maxTokens: parseCount(env, 'MAX_QUERY_TOKENS', DEFAULT_LIMITS.maxTokens),
      maxCost: parseCount(env, 'MAX_QUERY_COST', DEFAULT_LIMITS.maxCost),
      maxBodyBytes: parseCount(env, 'MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes),
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
    streamConsumerName:
      env.STREAM_CONSUMER_NAME ||
      os
        .hostname()
        .replace(/[^A-Za-z0-9_-]/g, '-')
        .slice(0, 64) ||
      'default',
  };
}
