import os from 'node:os';
import type { DatabaseConfig } from './database.js';
import type { ProcessConfig } from './process.js';
import { ConfigError, flag, httpUrl, integer, oneOf, pairs, port, text } from './read.js';
import { parseRedisUrl } from './redisUrl.js';
import type { RedisMode } from './redisUrl.js';
import type { Env } from './read.js';

/** Where what a stream reader finds goes: read by every process that reads the table's stream. */
export interface StreamOutputConfig {
  /** Change events (and the response cache's invalidations) travel over Redis pub/sub instead of staying in the process. */
  redisUrl: string | undefined;
  /** One Redis node, or a cluster whose seed nodes `redisUrl` lists. */
  redisMode: RedisMode;
  /** Signs everything written to Redis, and refuses what is read there unsigned, forged or replayed. */
  redisSigningSecret: string | undefined;
  /** Where the stream reader POSTs the public tags of each change (src/streams/cdnPurge.ts). */
  cdnPurgeUrl: string | undefined;
  /** Headers of each purge POST (its credentials). */
  cdnPurgeHeaders: Record<string, string>;
}

/**
 * CDN_PURGE_URL, refused with credentials in it: fetch cannot send a URL with `user:pass@`, and
 * a URL is not a secret (it is logged, shown in a console, written into a stack's template).
 */
function cdnPurgeUrl(env: Env): string | undefined {
  const url = httpUrl(env, 'CDN_PURGE_URL');
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('CDN_PURGE_URL must be an http:// or https:// URL');
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new ConfigError(
      'CDN_PURGE_URL must not carry credentials (user:pass@): put them in CDN_PURGE_HEADERS, e.g. Authorization=Basic%20<base64 of user:pass>',
    );
  }
  return url;
}

/**
 * REDIS_URL and its trust rule: REDIS_SIGNING_SECRET,
 * required in production unless REDIS_TRUSTED=true says the network is the boundary
 * (docs/decisions/redis-trust.md).
 */
export function readStreamOutput(env: Env, { nodeEnv }: Pick<ProcessConfig, 'nodeEnv'>): StreamOutputConfig {
  const redisUrl = text(env, 'REDIS_URL');
  const redisMode = oneOf(env, 'REDIS_MODE');
  if (redisUrl) parseRedisUrl(redisUrl, redisMode);
  const redisSigningSecret = text(env, 'REDIS_SIGNING_SECRET');
  if (redisSigningSecret !== undefined && redisSigningSecret.length < 32) {
    throw new ConfigError('REDIS_SIGNING_SECRET must be at least 32 characters');
  }
  const trusted = flag(env, 'REDIS_TRUSTED');
  if (redisUrl && !redisSigningSecret && !trusted && nodeEnv === 'production') {
    throw new ConfigError(
      'REDIS_URL is set without REDIS_SIGNING_SECRET in production: set REDIS_SIGNING_SECRET (32+ characters, the same on every instance, consumer and stream Lambda), or REDIS_TRUSTED=true if only trusted processes can reach that Redis',
    );
  }
  return {
    redisUrl,
    redisMode,
    redisSigningSecret,
    cdnPurgeUrl: cdnPurgeUrl(env),
    cdnPurgeHeaders: pairs(env, 'CDN_PURGE_HEADERS'),
  };
}

/** The server's in-process stream consumer. */
export interface InProcessConsumerConfig {
  /** On by default; off in aws mode (the stream Lambda reads the stream there) and with REDIS_URL. */
  streamConsumer: boolean;
  /** Names the consumer's checkpoints: one name per server instance (default: the host name). */
  streamConsumerName: string;
  /** Pause between polls of an idle stream shard. */
  streamPollMs: number;
}

export function readInProcessConsumer(
  env: Env,
  { mode, redisUrl }: Pick<DatabaseConfig, 'mode'> & Pick<StreamOutputConfig, 'redisUrl'>,
): InProcessConsumerConfig {
  const hostName = os
    .hostname()
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 64);
  return {
    // With Redis, the events come from `npm run consumer` or the Lambda: an in-process consumer
    // in every instance would publish each event once per instance.
    streamConsumer: flag(env, 'STREAM_CONSUMER') ?? (mode !== 'aws' && !redisUrl),
    streamConsumerName: text(env, 'STREAM_CONSUMER_NAME') ?? (hostName || 'default'),
    streamPollMs: integer(env, 'STREAM_POLL_MS'),
  };
}

/** `npm run consumer`: standalone consumers that share the work through shard leases. */
export interface ConsumerConfig {
  /** The checkpoints and leases its consumers share (default `processor`). */
  consumerGroup: string;
  /** The port of its /healthz, /readyz and /metrics (0 picks a free one). */
  consumerPort: number;
  /** How long a shard lease lasts without a heartbeat. */
  leaseTtlMs: number;
  /** Pause between polls of an idle stream shard. */
  streamPollMs: number;
}

export function readConsumer(env: Env): ConsumerConfig {
  return {
    consumerGroup: text(env, 'STREAM_CONSUMER_NAME') ?? 'processor',
    consumerPort: port(env, 'CONSUMER_PORT'),
    leaseTtlMs: integer(env, 'LEASE_TTL_MS'),
    streamPollMs: integer(env, 'STREAM_POLL_MS'),
  };
}

/** STREAM_POLL_MS's default. */
export const DEFAULT_STREAM_POLL_MS: number = integer({}, 'STREAM_POLL_MS');
