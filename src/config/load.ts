/**
 * One loader per process, each composing only the sections that process uses: what a loader
 * reads is what docs/configuration.md says the process reads (a unit test derives the `readBy`
 * column from these functions). Each throws ConfigError for a value it cannot use.
 */
import { readApi } from './api.js';
import type { ApiConfig } from './api.js';
import { readAuth, readDevSignIn } from './auth.js';
import type { AuthConfig } from './auth.js';
import { readDatabase, readLocalDatabase } from './database.js';
import type { DatabaseConfig, LocalDatabaseConfig } from './database.js';
import { readLimits } from './limits.js';
import type { QueryLimits } from './limits.js';
import { readProcess } from './process.js';
import type { ProcessConfig } from './process.js';
import type { Env } from './read.js';
import { readResponseCache, readSharedBumps } from './responseCache.js';
import type { ResponseCacheConfig, SharedBumpsConfig } from './responseCache.js';
import { readListener, readServer } from './server.js';
import type { ListenerConfig, ServerConfig } from './server.js';
import { readConsumer, readInProcessConsumer, readStreamOutput } from './streams.js';
import type { ConsumerConfig, InProcessConsumerConfig, StreamOutputConfig } from './streams.js';
import { readSubscriptions } from './subscriptions.js';
import type { SubscriptionsConfig } from './subscriptions.js';
import { readLambdaTelemetry, readTelemetry } from './telemetry.js';
import type { LambdaTelemetrySettings, TelemetrySettings } from './telemetry.js';

/** `npm start`: the HTTP and WebSocket server. */
export type Config = ProcessConfig &
  DatabaseConfig &
  LocalDatabaseConfig &
  ApiConfig & { auth: AuthConfig; devSignIn: boolean; limits: QueryLimits } & ServerConfig &
  SubscriptionsConfig &
  StreamOutputConfig &
  InProcessConsumerConfig & { responseCache: ResponseCacheConfig | undefined; telemetry: TelemetrySettings };

export function loadServerConfig(env: Env = process.env): Config {
  const proc = readProcess(env);
  const database = readDatabase(env, proc);
  const streams = readStreamOutput(env, proc);
  return {
    ...proc,
    ...database,
    ...readLocalDatabase(env),
    ...readApi(env, proc),
    ...readAuth(env, proc),
    ...readDevSignIn(env, { ...proc, mode: database.mode }),
    ...readLimits(env),
    ...readServer(env, proc),
    ...readSubscriptions(env),
    ...streams,
    ...readInProcessConsumer(env, { mode: database.mode, redisUrl: streams.redisUrl }),
    ...readResponseCache(env),
    telemetry: readTelemetry(env, { resolvers: true }),
  };
}

/** The GraphQL Lambda function: the API without a listener, subscriptions or a cache. */
export type GraphQLLambdaConfig = ProcessConfig &
  DatabaseConfig &
  ApiConfig & { auth: AuthConfig; limits: QueryLimits; telemetry: LambdaTelemetrySettings };

export function loadGraphQLLambdaConfig(env: Env = process.env): GraphQLLambdaConfig {
  const proc = readProcess(env);
  return {
    ...proc,
    ...readDatabase(env, proc),
    ...readApi(env, proc),
    ...readAuth(env, proc),
    ...readLimits(env),
    telemetry: readLambdaTelemetry(env, { resolvers: true }),
  };
}

/** The stream Lambda function: the stream's records in, change events and purges out. */
export type StreamLambdaConfig = ProcessConfig &
  DatabaseConfig &
  StreamOutputConfig & { sharedBumps: SharedBumpsConfig | undefined; telemetry: LambdaTelemetrySettings };

export function loadStreamLambdaConfig(env: Env = process.env): StreamLambdaConfig {
  const proc = readProcess(env);
  return {
    ...proc,
    ...readDatabase(env, proc),
    ...readStreamOutput(env, proc),
    ...readSharedBumps(env),
    telemetry: readLambdaTelemetry(env, { resolvers: false }),
  };
}

/** `npm run consumer`: standalone stream consumers with a health and metrics port. */
export type ConsumerProcessConfig = ProcessConfig &
  DatabaseConfig &
  LocalDatabaseConfig &
  ListenerConfig &
  StreamOutputConfig &
  ConsumerConfig & { sharedBumps: SharedBumpsConfig | undefined; telemetry: TelemetrySettings };

export function loadConsumerConfig(env: Env = process.env): ConsumerProcessConfig {
  const proc = readProcess(env);
  return {
    ...proc,
    ...readDatabase(env, proc),
    ...readLocalDatabase(env),
    ...readListener(env, proc),
    ...readStreamOutput(env, proc),
    ...readConsumer(env),
    ...readSharedBumps(env),
    telemetry: readTelemetry(env, { resolvers: false }),
  };
}

/** The command-line scripts (`npm run seed`, `migrate`, `documents`, `token`): the table, tokens, document limits. */
export type ScriptConfig = ProcessConfig &
  DatabaseConfig &
  LocalDatabaseConfig & { auth: AuthConfig; limits: QueryLimits };

export function loadScriptConfig(env: Env = process.env): ScriptConfig {
  const proc = readProcess(env);
  return {
    ...proc,
    ...readDatabase(env, proc),
    ...readLocalDatabase(env),
    ...readAuth(env, proc),
    ...readLimits(env),
  };
}
