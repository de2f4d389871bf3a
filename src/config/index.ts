/** The configuration: the spec of every environment variable, its readers, one loader per process. */
export { ENV_SPEC, SPEC_SECTIONS } from './spec.js';
export type { EnvName, Reader, VarSpec } from './spec.js';
export { ConfigError, durationSeconds } from './read.js';
export type { ProcessConfig } from './process.js';
export type { DatabaseConfig, DynamoMode, LocalDatabaseConfig } from './database.js';
export { defaultJwtMaxAgeSeconds, DEV_JWT_SECRET } from './auth.js';
export type { AuthConfig } from './auth.js';
export { DEFAULT_DOCUMENTS_REFRESH_MS, executorConfig } from './api.js';
export type { ApiConfig, ExecutorConfig } from './api.js';
export { DEFAULT_LIMITS } from './limits.js';
export type { QueryLimits } from './limits.js';
export { DEFAULT_HTTP_LIMITS, DEFAULT_SHUTDOWN_GRACE_MS } from './server.js';
export type { HttpLimits, ListenerConfig, ServerConfig } from './server.js';
export { DEFAULT_EVENT_DEDUPE_WINDOW, DEFAULT_SSE_REPLAY_EVENTS, DEFAULT_WEBSOCKET_LIMITS } from './subscriptions.js';
export type { SubscriptionsConfig, WebSocketLimits } from './subscriptions.js';
export { DEFAULT_STREAM_POLL_MS } from './streams.js';
export type { ConsumerConfig, InProcessConsumerConfig, StreamOutputConfig } from './streams.js';
export type { ResponseCacheConfig, SharedBumpsConfig } from './responseCache.js';
export type { LambdaTelemetrySettings, TelemetrySettings } from './telemetry.js';
export {
  loadConsumerConfig,
  loadGraphQLLambdaConfig,
  loadScriptConfig,
  loadServerConfig,
  loadStreamLambdaConfig,
} from './load.js';
export type { Config, ConsumerProcessConfig, GraphQLLambdaConfig, ScriptConfig, StreamLambdaConfig } from './load.js';
