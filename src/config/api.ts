import type { ProcessConfig } from './process.js';
import { ConfigError, flag, integer, oneOf, seconds, text } from './read.js';
import type { Env } from './read.js';

/** EXECUTOR and COMPILED_DOCUMENTS_MAX_BYTES: what executes operations (src/pipeline/execution/execution.ts). */
export interface ExecutorConfig {
  executor: 'auto' | 'graphql-js';
  /** Planned documents kept, at most (PLANNED_DOCUMENTS_MAX). */
  maxDocuments: number;
  /** Estimated bytes of the planned documents kept, at most. */
  maxBytes: number;
}

/**
 * Planned documents one instance keeps, at most: a constant, not a setting. The byte bound
 * (COMPILED_DOCUMENTS_MAX_BYTES) is what an operator sizes to the memory they have; this count
 * (1000 documents of at least 2 KiB each) only keeps the cache's bookkeeping small.
 */
export const PLANNED_DOCUMENTS_MAX = 1000;

/** The GraphQL API's settings: the server and the GraphQL Lambda read them. */
export interface ApiConfig {
  cursorSecret: string;
  /** Who sees capacity units in `extensions.cost.dynamodb`: admins only (the request count for others), or all. */
  costDetails: 'admin' | 'all';
  /** Schema introspection (and suggestions in validation errors). */
  introspection: boolean;
  /** Accept only trusted documents: the server's manifest and the registry's. */
  persistedOnly: boolean;
  /** How often the trusted-documents registry is polled. */
  documentsRefreshMs: number;
  /** Cache-Control max-age of public answers; 0 never marks an answer public. */
  cacheMaxAgeSeconds: number;
  executor: ExecutorConfig;
}

const DEV_CURSOR_SECRET = 'tablegraph-development-cursor-secret';

export function readApi(env: Env, { nodeEnv }: Pick<ProcessConfig, 'nodeEnv'>): ApiConfig {
  const production = nodeEnv === 'production';
  const cursorSecret = text(env, 'CURSOR_SECRET') ?? (production ? undefined : DEV_CURSOR_SECRET);
  if (!cursorSecret) {
    throw new ConfigError('NODE_ENV=production needs CURSOR_SECRET (a long random string that signs page cursors)');
  }
  if (production && cursorSecret === DEV_CURSOR_SECRET) {
    throw new ConfigError('CURSOR_SECRET must not be the development secret in production');
  }
  return {
    cursorSecret,
    costDetails: oneOf(env, 'COST_DETAILS'),
    introspection: flag(env, 'GRAPHQL_INTROSPECTION') ?? !production,
    persistedOnly: flag(env, 'PERSISTED_ONLY'),
    documentsRefreshMs: integer(env, 'DOCUMENTS_REFRESH_MS'),
    cacheMaxAgeSeconds: seconds(env, 'CACHE_MAX_AGE'),
    executor: executorConfig(env),
  };
}

/**
 * The executor settings alone: the API's `executor`, and the pipeline's default for an entry
 * point that does not pass its own (so every process honours EXECUTOR). The tests' differential
 * executor is not a setting: it is test support, handed to the pipeline by the test harness.
 */
export function executorConfig(env: Env = process.env): ExecutorConfig {
  return {
    executor: oneOf(env, 'EXECUTOR'),
    maxDocuments: PLANNED_DOCUMENTS_MAX,
    maxBytes: integer(env, 'COMPILED_DOCUMENTS_MAX_BYTES'),
  };
}

/** DOCUMENTS_REFRESH_MS's default. */
export const DEFAULT_DOCUMENTS_REFRESH_MS: number = integer({}, 'DOCUMENTS_REFRESH_MS');
