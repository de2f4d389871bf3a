import os from 'node:os';
import path from 'node:path';

/**
 * Every environment variable tablegraph reads, in one typed spec: docs/configuration.md is
 * generated from it (`npm run docs`; `npm run docs -- --check` and a unit test catch drift), and
 * the unit test fails for a variable the code reads without an entry here. To add a variable:
 * add one entry to ENV_SPEC, read it in loadConfig with the reader of its type, `npm run docs`.
 */

/** The processes that read a variable. */
export type Reader =
  /** `npm start` / `npm run start:prod`: the HTTP and WebSocket server */
  | 'server'
  /** the GraphQL Lambda function (src/lambda/graphql.ts) */
  | 'graphql-lambda'
  /** the stream Lambda function (src/lambda/streams.ts) */
  | 'stream-lambda'
  /** the command-line scripts (`npm run seed`, `token`, ...) */
  | 'scripts'
  /** the test suite */
  | 'tests'
  /** the example client (`npm run example:client`) */
  | 'client'
  /** `npm run consumer`: standalone stream consumers */
  | 'consumer';

export interface VarSpec {
  /**
   * `integer` is a positive integer, `seconds` a whole number of seconds (0 allowed), `list`
   * comma-separated; an array lists the allowed values.
   */
  type: 'string' | 'integer' | 'seconds' | 'boolean' | 'port' | 'url' | 'list' | 'secret' | readonly string[];
  /** The value when the variable is unset or empty, as written in the environment. */
  default?: string;
  /** Says the default when it is not one fixed value (it depends on NODE_ENV, say). */
  defaultText?: string;
  description: string;
  readBy: readonly Reader[];
}

const SERVICE: readonly Reader[] = ['server', 'graphql-lambda'];
const ALL_SERVICES: readonly Reader[] = ['server', 'graphql-lambda', 'stream-lambda'];
const TELEMETRY_READERS: readonly Reader[] = [...ALL_SERVICES, 'consumer'];

export const ENV_SPEC = {
  NODE_ENV: {
    type: ['development', 'production', 'test'],
    default: 'development',
    description:
      '`production` refuses development secrets and turns introspection and the playground off; `test` silences the logs',
    readBy: [...ALL_SERVICES, 'scripts'],
  },
  HOST: {
    type: 'string',
    defaultText: '`127.0.0.1` (this machine only) outside production, `0.0.0.0` in production',
    description: 'interface the HTTP server binds',
    readBy: ['server'],
  },
  PORT: {
    type: 'port',
    default: '4000',
    description: 'HTTP port (`/graphql`, `/healthz`, `/readyz`, `/metrics`); `0` picks a free one',
    readBy: ['server'],
  },
  DATA_DIR: {
    type: 'string',
    default: '.data',
    description: 'where the embedded DynamoDB Local keeps its data (relative to the working directory)',
    readBy: ['server', 'scripts'],
  },
  TABLE_NAME: {
    type: 'string',
    default: 'MainTable',
    description: 'the table (3-255 characters of `A-Z a-z 0-9 _ . -`)',
    readBy: [...ALL_SERVICES, 'scripts'],
  },
  DYNAMODB_MODE: {
    type: ['embedded', 'endpoint', 'aws'],
    defaultText: '`embedded`, or `endpoint` when `DYNAMODB_ENDPOINT` is set',
    description:
      '`embedded`: start DynamoDB Local; `endpoint`: use `DYNAMODB_ENDPOINT`; `aws`: Amazon DynamoDB with the standard credential chain. AWS variables alone never switch to `aws`',
    readBy: [...ALL_SERVICES, 'scripts'],
  },
  DYNAMODB_ENDPOINT: {
    type: 'url',
    description: 'a DynamoDB-compatible endpoint, e.g. `http://localhost:8000`',
    readBy: [...ALL_SERVICES, 'scripts'],
  },
  DYNAMODB_LOCAL_PORT: {
    type: 'port',
    defaultText: 'a free port',
    description: 'port of the embedded DynamoDB Local',
    readBy: ['server', 'scripts'],
  },
  AWS_REGION: {
    type: 'string',
    defaultText: '`AWS_DEFAULT_REGION`, else `us-east-1`',
    description: 'region of the DynamoDB client (any value works with DynamoDB Local)',
    readBy: [...ALL_SERVICES, 'scripts'],
  },
  AWS_DEFAULT_REGION: {
    type: 'string',
    description: 'read when `AWS_REGION` is unset',
    readBy: [...ALL_SERVICES, 'scripts'],
  },
  CURSOR_SECRET: {
    type: 'secret',
    defaultText: 'a fixed development value; **required** in production',
    description: 'signs page cursors (a long random string)',
    readBy: SERVICE,
  },
  JWT_SECRET: {
    type: 'secret',
    defaultText: 'a fixed development value outside production',
    description:
      'HS256 secret that verifies bearer tokens (and signs `npm run token`); at least 32 characters in production',
    readBy: [...SERVICE, 'scripts'],
  },
  JWT_JWKS_URL: {
    type: 'url',
    description: 'a JWKS URL: verify tokens with the issuer’s public keys instead of `JWT_SECRET`',
    readBy: SERVICE,
  },
  JWT_ISSUER: {
    type: 'string',
    default: 'tablegraph-local',
    description: 'the `iss` every token must carry (required with `JWT_JWKS_URL`)',
    readBy: [...SERVICE, 'scripts'],
  },
  JWT_AUDIENCE: {
    type: 'string',
    default: 'tablegraph',
    description: 'the `aud` every token must carry (required with `JWT_JWKS_URL`)',
    readBy: [...SERVICE, 'scripts'],
  },
  LOG_FORMAT: {
    type: ['json', 'pretty'],
    defaultText: '`pretty` when stdout is a terminal outside production, else `json`',
    description: 'one JSON object per line (for log collectors), or coloured lines for a person (pino-pretty)',
    readBy: ['server'],
  },
  LOG_LEVEL: {
    type: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    defaultText: '`info` (`silent` when `NODE_ENV=test`)',
    description: 'pino log level',
    readBy: ALL_SERVICES,
  },
  SEED_DEMO_DATA: {
    type: 'boolean',
    default: 'true',
    description: '`false` skips the demo data on first start (never seeded in `aws` mode)',
    readBy: ['server'],
  },
  MAX_QUERY_DEPTH: {
    type: 'integer',
    default: '12',
    description: 'deepest selection a document may have',
    readBy: SERVICE,
  },
  MAX_QUERY_ALIASES: {
    type: 'integer',
    default: '15',
    description: 'most aliases in one document',
    readBy: SERVICE,
  },
  MAX_QUERY_DIRECTIVES: {
    type: 'integer',
    default: '10',
    description: 'most directives in one document',
    readBy: SERVICE,
  },
  MAX_QUERY_TOKENS: {
    type: 'integer',
    default: '2000',
    description: 'most lexical tokens in one document (checked before parsing completes)',
    readBy: SERVICE,
  },
  MAX_QUERY_COST: {
    type: 'integer',
    default: '5000',
    description: 'largest estimated cost: connection sizes multiply their selections',
    readBy: SERVICE,
  },
  MAX_BODY_BYTES: {
    type: 'integer',
    default: '100000',
    description: 'largest request body, in bytes (413 above it)',
    readBy: ['server'],
  },
  MAX_RESPONSE_BYTES: {
    type: 'integer',
    default: '4000000',
    description: 'largest answer, in bytes; a larger one is refused instead of sent',
    readBy: SERVICE,
  },
  // Operation budgets: what one operation may spend while it runs (src/pipeline/meter.ts).
  MAX_OPERATION_REQUESTS: {
    type: 'integer',
    default: '100',
    description: 'most DynamoDB requests one operation (or one subscription event) may make',
    readBy: SERVICE,
  },
  MAX_OPERATION_READ_UNITS: {
    type: 'integer',
    default: '1000',
    description: 'most read capacity units one operation may consume',
    readBy: SERVICE,
  },
  MAX_RESULT_ENTRIES: {
    type: 'integer',
    default: '10000',
    description:
      'most entries (fields and list elements, `__typename` included) one answer may hold; counted before they are built',
    readBy: SERVICE,
  },
  MAX_RESULT_BYTES: {
    type: 'integer',
    default: '4000000',
    description:
      'most bytes one answer may hold, as estimated while it is built (MAX_RESPONSE_BYTES measures the finished answer)',
    readBy: SERVICE,
  },
  // What opening subscriptions may read (src/pipeline/subscribeReads.ts).
  SUBSCRIBE_READS_PER_VIEWER: {
    type: 'integer',
    default: '50',
    description:
      'DynamoDB reads one viewer’s subscriptions may make while opening, per `SUBSCRIBE_READ_WINDOW_MS` (a token bucket; more: `RATE_LIMITED`)',
    readBy: ['server'],
  },
  SUBSCRIBE_READS_PER_INSTANCE: {
    type: 'integer',
    default: '1000',
    description:
      'DynamoDB reads all subscriptions opening on one server may make, per `SUBSCRIBE_READ_WINDOW_MS` (a token bucket; more: `RATE_LIMITED`)',
    readBy: ['server'],
  },
  SUBSCRIBE_READ_WINDOW_MS: {
    type: 'integer',
    default: '10000',
    description: 'the window of the subscribe-read budgets: an empty bucket refills completely over it',
    readBy: ['server'],
  },
  JWT_MAX_AGE: {
    type: 'string',
    default: '24h',
    description: 'a token older than this (by its `iat`) is refused whatever its `exp`: `3600`, `30m`, `24h`, `7d`',
    readBy: SERVICE,
  },
  METRICS_TOKEN: {
    type: 'secret',
    description:
      'a scraper sending `Authorization: Bearer <token>` may read `/metrics` from anywhere (loopback clients always may)',
    readBy: ['server', 'consumer'],
  },
  METRICS_PORT: {
    type: 'port',
    description: 'serve `/metrics` on a port of its own (unset: the main port)',
    readBy: ['server'],
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    type: 'integer',
    default: '30000',
    description: 'a whole request must arrive within this',
    readBy: ['server'],
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    type: 'integer',
    default: '10000',
    description: 'a request’s headers must arrive within this',
    readBy: ['server'],
  },
  HTTP_KEEP_ALIVE_TIMEOUT_MS: {
    type: 'integer',
    default: '5000',
    description: 'an idle keep-alive connection closes after this',
    readBy: ['server'],
  },
  MAX_CONNECTIONS: {
    type: 'integer',
    default: '1000',
    description: 'open sockets per server, WebSockets included',
    readBy: ['server'],
  },
  COST_DETAILS: {
    type: ['admin', 'all'],
    default: 'admin',
    description:
      'who sees capacity units in `extensions.cost.dynamodb`: admins only (others get the request count), or every caller',
    readBy: SERVICE,
  },
  GRAPHQL_INTROSPECTION: {
    type: 'boolean',
    defaultText: '`true` outside production',
    description: 'schema introspection (and schema suggestions in validation errors)',
    readBy: SERVICE,
  },
  PLAYGROUND: {
    type: 'boolean',
    defaultText: '`true` outside production',
    description: 'serve the GraphiQL playground to browsers at `GET /graphql`',
    readBy: ['server'],
  },
  PERSISTED_ONLY: {
    type: 'boolean',
    default: 'false',
    description: 'run only the documents of the persisted-documents manifest',
    readBy: SERVICE,
  },
  // Execution (src/pipeline/executor.ts, docs/performance.md "The executor")
  EXECUTOR: {
    type: ['graphql-js', 'compiled', 'differential'],
    default: 'graphql-js',
    description:
      'what executes operations: graphql-js, `compiled` (graphql-jit, with graphql-js for the documents it cannot match), or `differential` (both, answering EXECUTOR_MISMATCH on any difference: for tests and staging, as it executes every query twice)',
    readBy: SERVICE,
  },
  COMPILED_DOCUMENTS_MAX: {
    type: 'integer',
    default: '1000',
    description: 'compiled documents one instance keeps (`EXECUTOR=compiled`); the least recently used go first',
    readBy: SERVICE,
  },
  COMPILED_DOCUMENTS_MAX_BYTES: {
    type: 'integer',
    default: '33554432',
    description: 'estimated bytes the compiled documents of one instance may take (32 MiB)',
    readBy: SERVICE,
  },
  ITEM_COLLECTION_READS: {
    type: 'boolean',
    default: 'true',
    description:
      'read a user with the first page of their orders in one Query (their item collection); `false` only to measure what it saves',
    readBy: SERVICE,
  },
  CORS_ORIGINS: {
    type: 'list',
    description:
      'browser origins allowed to call `/graphql` (CORS) and open its WebSocket, e.g. `https://shop.example.com,https://admin.example.com`; none when unset. Development also allows `http://localhost:<any port>`',
    readBy: ['server'],
  },
  CACHE_MAX_AGE: {
    type: 'seconds',
    default: '60',
    description:
      'seconds browsers and CDNs may reuse an anonymous persisted GET that reads only public data (`Cache-Control: public`); `0`: every answer is `private, no-store`',
    readBy: SERVICE,
  },
  SHUTDOWN_GRACE_MS: {
    type: 'integer',
    default: '10000',
    description: 'on SIGTERM, how long in-flight requests may take before their connections are closed',
    readBy: ['server'],
  },
  STREAM_CONSUMER: {
    type: 'boolean',
    defaultText: '`true`, `false` in `aws` mode (use the stream Lambda there)',
    description: 'run the in-process stream consumer (soldCount, subscriptions fed by every write)',
    readBy: ['server'],
  },
  STREAM_CONSUMER_NAME: {
    type: 'string',
    defaultText: 'the host name (server); `processor` (`npm run consumer`)',
    description:
      'names the stream consumer’s checkpoints: one name per server instance; the consumers of `npm run consumer` that share a name share the work through shard leases',
    readBy: ['server', 'consumer'],
  },
  REDIS_URL: {
    type: 'url',
    description:
      '`redis://` or `rediss://`: order events travel over Redis pub/sub between instances (and the in-process consumer is off by default: run `npm run consumer` or the stream Lambda)',
    readBy: ['server', 'consumer', 'stream-lambda'],
  },
  CONSUMER_PORT: {
    type: 'port',
    default: '9464',
    description: 'port of `npm run consumer`’s `/healthz`, `/readyz` and `/metrics` (`0` picks a free one)',
    readBy: ['consumer'],
  },
  LEASE_TTL_MS: {
    type: 'integer',
    default: '10000',
    description: 'how long a consumer’s shard lease lasts without a heartbeat',
    readBy: ['consumer'],
  },
  STREAM_POLL_MS: {
    type: 'integer',
    default: '200',
    description: 'pause between polls of an idle stream shard',
    readBy: ['consumer'],
  },
  // Order events on Redis: who may publish them, and how repeats are dropped.
  EVENT_SIGNING_SECRET: {
    type: 'secret',
    description:
      'HMAC-SHA256 key (at least 32 characters) of order events on Redis: publishers sign, instances drop unsigned or forged events; set the same on every instance, consumer and stream Lambda',
    readBy: ['server', 'consumer', 'stream-lambda'],
  },
  EVENT_DEDUPE_WINDOW: {
    type: 'integer',
    default: '10000',
    description:
      'how many recent order events (by stream sequence number) an instance remembers to deliver each change once',
    readBy: ['server'],
  },
  // The response cache (docs/caching.md)
  RESPONSE_CACHE: {
    type: ['on', 'off'],
    default: 'on',
    description:
      'keep query answers until the table changes what they read (evicted through the stream on every instance); served only while the invalidation feed is live; the GraphQL Lambda never caches (it has no feed)',
    readBy: ['server'],
  },
  RESPONSE_CACHE_MAX_BYTES: {
    type: 'integer',
    default: '67108864',
    description: 'bytes the cached answers of one instance may take (64 MiB); the least recently used go first',
    readBy: ['server'],
  },
  RESPONSE_CACHE_MAX_AGE: {
    type: 'seconds',
    default: '300',
    description: 'the oldest a cached answer may be, whatever the invalidations; `0` turns the cache off',
    readBy: ['server'],
  },
  RESPONSE_CACHE_INDEX_HOLD_MS: {
    type: 'integer',
    default: '1000',
    description:
      'after a change, how long answers read from a global index (eventually consistent) that it touched are kept at most (they expire when this hold-down ends)',
    readBy: ['server'],
  },
  RESPONSE_CACHE_SHARED: {
    type: ['on', 'off'],
    default: 'on',
    description:
      'with REDIS_URL: also keep answers in Redis (keys `tablegraph:rc:<table>:*`, each with a TTL), read by every instance on a miss in its own cache; give that Redis a `maxmemory` with the `volatile-lru` policy',
    readBy: ['server'],
  },
  CDN_PURGE_URL: {
    type: 'url',
    description:
      'receives a POST `{"tags":[...]}` with the public dependency tags of every change read from the stream (batched, retried a bounded number of times), to purge a CDN by tag; sent by the process that reads the stream',
    readBy: ['server', 'consumer', 'stream-lambda'],
  },
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
  // OpenTelemetry (src/telemetry/): the standard variables; nothing is loaded unless an OTLP endpoint is set.
  OTEL_SDK_DISABLED: {
    type: 'boolean',
    default: 'false',
    description: '`true` turns traces and OTLP metrics off whatever else is set',
    readBy: TELEMETRY_READERS,
  },
  OTEL_SERVICE_NAME: {
    type: 'string',
    defaultText: '`tablegraph-api`, `tablegraph-consumer`, `tablegraph-graphql-lambda` or `tablegraph-stream-lambda`',
    description: 'the `service.name` resource attribute of every span and metric',
    readBy: TELEMETRY_READERS,
  },
  OTEL_RESOURCE_ATTRIBUTES: {
    type: 'list',
    description: 'more resource attributes, `key=value` pairs (`deployment.environment.name=prod,service.version=1.2`)',
    readBy: TELEMETRY_READERS,
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    type: 'url',
    description:
      'the collector’s OTLP/HTTP base URL (`http://localhost:4318`): traces go to `/v1/traces`, metrics to `/v1/metrics`; unset (and no per-signal endpoint): no telemetry at all',
    readBy: TELEMETRY_READERS,
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    type: 'url',
    description: 'the full URL traces are sent to, instead of `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
    readBy: TELEMETRY_READERS,
  },
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: {
    type: 'url',
    description: 'the full URL metrics are sent to, instead of `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`',
    readBy: TELEMETRY_READERS,
  },
  OTEL_EXPORTER_OTLP_PROTOCOL: {
    type: ['http/protobuf', 'http/json'],
    default: 'http/protobuf',
    description: 'the OTLP encoding (gRPC is not offered: the exporters stay pure JavaScript)',
    readBy: TELEMETRY_READERS,
  },
  OTEL_EXPORTER_OTLP_HEADERS: {
    type: 'secret',
    description: 'headers of every export, `key=value` pairs (an API key of a hosted collector)',
    readBy: TELEMETRY_READERS,
  },
  OTEL_EXPORTER_OTLP_TIMEOUT: {
    type: 'integer',
    default: '10000',
    description:
      'milliseconds an export may take; a collector that does not answer costs a dropped batch, never a request',
    readBy: TELEMETRY_READERS,
  },
  OTEL_TRACES_EXPORTER: {
    type: ['otlp', 'none'],
    default: 'otlp',
    description: '`none` keeps OTLP metrics but sends no spans',
    readBy: TELEMETRY_READERS,
  },
  OTEL_METRICS_EXPORTER: {
    type: ['otlp', 'none'],
    default: 'otlp',
    description: '`none` keeps traces but sends no metrics over OTLP (`/metrics` is served either way)',
    readBy: TELEMETRY_READERS,
  },
  OTEL_TRACES_SAMPLER: {
    type: [
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ],
    default: 'parentbased_always_on',
    description: 'which traces are recorded; `parentbased_*` follow the sampled flag of an incoming `traceparent`',
    readBy: TELEMETRY_READERS,
  },
  OTEL_TRACES_SAMPLER_ARG: {
    type: 'string',
    default: '1',
    description: 'the ratio of the `*traceidratio` samplers, 0 to 1 (`0.01`: one trace in a hundred)',
    readBy: TELEMETRY_READERS,
  },
  OTEL_BSP_MAX_QUEUE_SIZE: {
    type: 'integer',
    default: '2048',
    description: 'spans waiting for export; beyond it spans are dropped and counted (`otel_spans_dropped_total`)',
    readBy: TELEMETRY_READERS,
  },
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: {
    type: 'integer',
    default: '512',
    description: 'spans per export request',
    readBy: TELEMETRY_READERS,
  },
  OTEL_BSP_SCHEDULE_DELAY: {
    type: 'integer',
    default: '5000',
    description: 'milliseconds between span exports (the Lambdas flush at the end of every invocation instead)',
    readBy: TELEMETRY_READERS,
  },
  OTEL_METRIC_EXPORT_INTERVAL: {
    type: 'integer',
    default: '60000',
    description: 'milliseconds between OTLP metric exports',
    readBy: TELEMETRY_READERS,
  },
  TELEMETRY_FLUSH_TIMEOUT_MS: {
    type: 'integer',
    default: '1000',
    description:
      'the Lambdas: milliseconds an invocation waits, before it returns, for its spans and OTLP metrics to be exported (less when the invocation has less time left); what is not out by then is dropped and counted',
    readBy: ['graphql-lambda', 'stream-lambda'],
  },
  EMF_METRICS: {
    type: 'boolean',
    default: 'true',
    description:
      'the Lambdas: write the metrics as CloudWatch embedded metric format lines (namespace `tablegraph`) to the function’s log after each invocation',
    readBy: ['graphql-lambda', 'stream-lambda'],
  },
  TRACE_RESOLVERS: {
    type: 'boolean',
    default: 'false',
    description: 'a span per resolved field, for a close look at one slow operation (costly: off by default)',
    readBy: ['server', 'graphql-lambda'],
  },
  GRAPHQL_URL: {
    type: 'url',
    default: 'http://localhost:4000/graphql',
    description: 'the API the example client calls',
    readBy: ['client'],
  },
  TABLEGRAPH_TOKEN: {
    type: 'secret',
    description: 'the bearer token of the example client (`npm run example:client` makes one)',
    readBy: ['client'],
  },
  // Trusted documents and GraphQL over SSE
  DOCUMENTS_REFRESH_MS: {
    type: 'integer',
    default: '5000',
    description:
      'how often each instance looks for new or retired app manifests in the trusted-documents registry (`npm run documents`); a change is served within about this long',
    readBy: SERVICE,
  },
  SSE_REPLAY_EVENTS: {
    type: 'integer',
    default: '1000',
    description:
      'recent order events each instance holds so that a Server-Sent Events stream resuming with `Last-Event-ID` receives what it missed; older gaps get `EVENTS_MISSED` (refetch)',
    readBy: ['server'],
  },
  CHROMIUM_PATH: {
    type: 'string',
    default: '/usr/bin/chromium',
    description: 'the headless browser of the browser tests',
    readBy: ['tests'],
  },
  STOREFRONT_SCREENSHOT: {
    type: 'string',
    description: "a PNG file the storefront's browser test also saves a screenshot to",
    readBy: ['tests'],
  },
  SOAK_ROUNDS: {
    type: 'integer',
    default: '200',
    description: 'fault rounds of `npm run soak` (the exactly-once soak)',
    readBy: ['tests'],
  },
  SOAK_SEED: {
    type: 'integer',
    default: '1',
    description: "seed of `npm run soak`'s faults and choices: the same seed replays the same rounds",
    readBy: ['tests'],
  },
  SOAK_MAX_MS: {
    type: 'integer',
    default: '210000',
    description:
      '`npm run soak` starts no round after this many milliseconds, and fails if it stopped short of SOAK_ROUNDS',
    readBy: ['tests'],
  },
  SOAK_FAULTS: {
    type: 'string',
    description: 'the SDK faults a soak consumer process injects (JSON, set by `npm run soak` for its children)',
    readBy: ['tests'],
  },
} as const satisfies Record<string, VarSpec>;

export type EnvName = keyof typeof ENV_SPEC;

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

/** OpenTelemetry (the OTEL_* variables, src/telemetry/): undefined signals are off and load nothing. */
export interface TelemetrySettings {
  /** Span export: set when an OTLP traces endpoint is configured and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none. */
  traces:
    | {
        url: string;
        sampler: (typeof ENV_SPEC.OTEL_TRACES_SAMPLER.type)[number];
        ratio: number;
        maxQueueSize: number;
        maxExportBatchSize: number;
        scheduleDelayMs: number;
      }
    | undefined;
  /** OTLP metric export (the Prometheus /metrics is served either way). */
  metrics: { url: string; intervalMs: number } | undefined;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  timeoutMs: number;
  /** OTEL_SERVICE_NAME; undefined: the process's own default name. */
  serviceName: string | undefined;
  resourceAttributes: Record<string, string>;
  /** TRACE_RESOLVERS: a span per resolved field. */
  resolverSpans: boolean;
  /** TELEMETRY_FLUSH_TIMEOUT_MS: the Lambdas' bound on the export at the end of an invocation. */
  flushTimeoutMs: number;
  /** EMF_METRICS: the Lambdas write CloudWatch EMF lines. */
  emf: boolean;
}

/** Where the server finds DynamoDB (DYNAMODB_MODE). */
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
  /** Port of the embedded DynamoDB Local (undefined: a free one). */
  localPort: number | undefined;
  tableName: string;
  mode: DynamoMode;
  /** Set in `endpoint` mode; the embedded mode fills it in once DynamoDB Local listens. */
  endpoint: string | undefined;
  region: string;
  cursorSecret: string;
  nodeEnv: string;
  logLevel: string;
  /** JSON lines or pino-pretty; undefined: pretty on a terminal outside production (logger.ts). */
  logFormat: 'json' | 'pretty' | undefined;
  /** Browser origins allowed by CORS and WebSocket upgrades (CORS_ORIGINS). */
  corsOrigins: string[];
  /** Cache-Control max-age of public answers; 0 never marks an answer public. */
  cacheMaxAgeSeconds: number;
  /** The response cache (docs/caching.md); undefined when off. */
  responseCache: ResponseCacheConfig | undefined;
  /** Write the demo data on the first start (never in aws mode). */
  seedDemoData: boolean;
  auth: AuthConfig;
  limits: QueryLimits;
  sockets: SocketLimits;
  /** Schema introspection (on in development; off in production unless GRAPHQL_INTROSPECTION=true). */
  introspection: boolean;
  /** The GraphiQL page (on in development; off in production unless PLAYGROUND=true). */
  playground: boolean;
  /** Accept only trusted documents: the server's manifest and the registry's (PERSISTED_ONLY=true). */
  persistedOnly: boolean;
  /** DOCUMENTS_REFRESH_MS: how often the trusted-documents registry is polled. */
  documentsRefreshMs: number;
  /** SSE_REPLAY_EVENTS: recent events held for resuming SSE streams. */
  sseReplayEvents: number;
  /** On SIGTERM, how long in-flight requests may take before their connections are closed. */
  shutdownGraceMs: number;
  /** The in-process stream consumer: on by default, off in aws mode (use the Lambda handler there) and with REDIS_URL. */
  streamConsumer: boolean;
  /** Names the consumer's checkpoints: one name per server instance (default: the host name). */
  streamConsumerName: string;
  /** REDIS_URL: order events travel over Redis pub/sub instead of staying in the process. */
  redisUrl: string | undefined;
  /** CDN_PURGE_URL: where the stream reader POSTs the public tags of each change (src/streams/cdnPurge.ts). */
  cdnPurgeUrl: string | undefined;
  /** `npm run consumer`: the checkpoints and leases its consumers share (STREAM_CONSUMER_NAME, default `processor`). */
  consumerGroup: string;
  /** `npm run consumer`: the port of its /healthz, /readyz and /metrics (0 picks a free one). */
  consumerPort: number;
  /** `npm run consumer`: how long a shard lease lasts without a heartbeat. */
  leaseTtlMs: number;
  /** `npm run consumer`: pause between polls of an idle stream. */
  streamPollMs: number;
  /** EVENT_SIGNING_SECRET (sign and check events on Redis) and EVENT_DEDUPE_WINDOW (repeats dropped). */
  events: { signingSecret: string | undefined; dedupeWindow: number };
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
  /** EXECUTOR and COMPILED_DOCUMENTS_*: what executes operations. */
  executor: ExecutorConfig;
  /** OpenTelemetry traces and metrics (the OTEL_* variables). */
  telemetry: TelemetrySettings;
}

/** RESPONSE_CACHE_*. */
export interface ResponseCacheConfig {
  maxBytes: number;
  maxAgeSeconds: number;
  indexHoldMs: number;
  /** Also keep answers in Redis (only with REDIS_URL). */
  shared: boolean;
}

/** EXECUTOR, COMPILED_DOCUMENTS_MAX, COMPILED_DOCUMENTS_MAX_BYTES (src/pipeline/executor.ts). */
export interface ExecutorConfig {
  executor: 'graphql-js' | 'compiled' | 'differential';
  /** Compiled documents kept, at most. */
  maxDocuments: number;
  /** Estimated bytes of the compiled documents kept, at most. */
  maxBytes: number;
}

/** Query limits (docs/security.md); each has an environment variable. */
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
  /** MAX_OPERATION_REQUESTS: DynamoDB requests one operation may make while it runs. */
  maxOperationRequests: number;
  /** MAX_OPERATION_READ_UNITS: read capacity units one operation may consume. */
  maxOperationReadUnits: number;
  /** MAX_RESULT_ENTRIES: entries one answer may hold, counted before they are built. */
  maxResultEntries: number;
  /** MAX_RESULT_BYTES: bytes one answer may hold, estimated while it is built. */
  maxResultBytes: number;
  /** SUBSCRIBE_READS_PER_VIEWER: reads one viewer's subscriptions may make while opening, per window. */
  subscribeReadsPerViewer: number;
  /** SUBSCRIBE_READS_PER_INSTANCE: reads all subscriptions opening on this server may make, per window. */
  subscribeReadsPerInstance: number;
  /** SUBSCRIBE_READ_WINDOW_MS: an empty subscribe-read bucket refills completely over this. */
  subscribeReadWindowMs: number;
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
  maxSockets: Number(ENV_SPEC.WS_MAX_SOCKETS.default),
  maxOperationsPerSocket: Number(ENV_SPEC.WS_MAX_OPERATIONS_PER_SOCKET.default),
  idleTimeoutMs: Number(ENV_SPEC.WS_IDLE_TIMEOUT_MS.default),
  keepAliveMs: Number(ENV_SPEC.WS_KEEPALIVE_MS.default),
  connectionInitTimeoutMs: Number(ENV_SPEC.WS_CONNECTION_INIT_TIMEOUT_MS.default),
};

/** The limits of an empty environment (ENV_SPEC's defaults). */
export const DEFAULT_LIMITS: QueryLimits = {
  maxDepth: Number(ENV_SPEC.MAX_QUERY_DEPTH.default),
  maxAliases: Number(ENV_SPEC.MAX_QUERY_ALIASES.default),
  maxDirectives: Number(ENV_SPEC.MAX_QUERY_DIRECTIVES.default),
  maxTokens: Number(ENV_SPEC.MAX_QUERY_TOKENS.default),
  maxCost: Number(ENV_SPEC.MAX_QUERY_COST.default),
  maxBodyBytes: Number(ENV_SPEC.MAX_BODY_BYTES.default),
  maxResponseBytes: Number(ENV_SPEC.MAX_RESPONSE_BYTES.default),
  maxOperationRequests: Number(ENV_SPEC.MAX_OPERATION_REQUESTS.default),
  maxOperationReadUnits: Number(ENV_SPEC.MAX_OPERATION_READ_UNITS.default),
  maxResultEntries: Number(ENV_SPEC.MAX_RESULT_ENTRIES.default),
  maxResultBytes: Number(ENV_SPEC.MAX_RESULT_BYTES.default),
  subscribeReadsPerViewer: Number(ENV_SPEC.SUBSCRIBE_READS_PER_VIEWER.default),
  subscribeReadsPerInstance: Number(ENV_SPEC.SUBSCRIBE_READS_PER_INSTANCE.default),
  subscribeReadWindowMs: Number(ENV_SPEC.SUBSCRIBE_READ_WINDOW_MS.default),
};

/** Thrown for a configuration the server refuses to start with; main prints only its message. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DEV_CURSOR_SECRET = 'tablegraph-development-cursor-secret';
/** Signs local tokens outside production; printed nowhere, and refused by production mode. */
export const DEV_JWT_SECRET = 'tablegraph-development-jwt-secret';

type SpecOf<N extends EnvName> = (typeof ENV_SPEC)[N];
/** The variables of one type: a reader accepts only the names its type fits. */
type NamesOfType<T> = { [N in EnvName]: SpecOf<N>['type'] extends T ? N : never }[EnvName];

/** The value of `name`, or its spec's default; undefined when neither is set. */
function raw(env: NodeJS.ProcessEnv, name: EnvName): string | undefined {
  const value = env[name];
  if (value !== undefined && value !== '') return value;
  const spec: VarSpec = ENV_SPEC[name];
  return spec.default;
}

function integer(env: NodeJS.ProcessEnv, name: NamesOfType<'integer'>, fallback?: number): number {
  const value = raw(env, name);
  if (value === undefined) {
    if (fallback === undefined) throw new ConfigError(`${name} is required`);
    return fallback;
  }
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new ConfigError(`${name} must be a positive integer, got "${value}"`);
  }
  return number;
}

function seconds(env: NodeJS.ProcessEnv, name: NamesOfType<'seconds'>): number {
  const value = raw(env, name) ?? '0';
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number)) {
    throw new ConfigError(`${name} must be a whole number of seconds, got "${value}"`);
  }
  return number;
}

/** A comma-separated list; blanks around items are dropped. */
const list = (env: NodeJS.ProcessEnv, name: NamesOfType<'list'>): string[] =>
  (raw(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** Exact origins: `https://host[:port]`, nothing after it. */
function origins(env: NodeJS.ProcessEnv, name: NamesOfType<'list'>): string[] {
  return list(env, name).map((origin) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) {
      throw new ConfigError(
        `${name} lists origins like https://shop.example.com (no path or trailing /), got "${origin}"`,
      );
    }
    return origin;
  });
}

function flag(env: NodeJS.ProcessEnv, name: NamesOfType<'boolean'>, fallback = false): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

function port<N extends NamesOfType<'port'>>(env: NodeJS.ProcessEnv, name: N): Value<N, number> {
  const value = raw(env, name);
  if (value === undefined) return undefined as Value<N, number>;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) {
    throw new ConfigError(`${name} must be an integer between 0 and 65535, got "${value}"`);
  }
  return number;
}

function oneOf<N extends NamesOfType<readonly string[]>>(
  env: NodeJS.ProcessEnv,
  name: N,
  fallback?: SpecOf<N>['type'][number],
): SpecOf<N>['type'][number] | undefined {
  const value = raw(env, name) ?? fallback;
  const allowed: readonly string[] = ENV_SPEC[name].type;
  if (value !== undefined && !allowed.includes(value)) {
    throw new ConfigError(`${name} must be ${allowed.join(', ')}, got "${value}"`);
  }
  return value as SpecOf<N>['type'][number] | undefined;
}

/** Defined when the spec names a default. */
type Value<N extends EnvName, T> = SpecOf<N> extends { default: string } ? T : T | undefined;

/** A string, URL or secret variable: its value or its spec's default. */
const text = <N extends NamesOfType<'string' | 'url' | 'secret'>>(env: NodeJS.ProcessEnv, name: N) =>
  raw(env, name) as Value<N, string>;

/**
 * Reads the configuration from the environment, through ENV_SPEC. Throws ConfigError for a
 * value it cannot use (a bad port, an unknown DYNAMODB_MODE, production without CURSOR_SECRET).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';
  const endpoint = text(env, 'DYNAMODB_ENDPOINT');
  const mode = oneOf(env, 'DYNAMODB_MODE', endpoint ? 'endpoint' : 'embedded') ?? 'embedded';
  if (mode === 'embedded' && nodeEnv === 'production') {
    // DynamoDB Local has no authentication and no durability guarantees: never a production store.
    throw new ConfigError(
      'NODE_ENV=production refuses the embedded DynamoDB Local: set DYNAMODB_MODE=aws, or DYNAMODB_ENDPOINT=http://host:port',
    );
  }
  if (mode === 'endpoint' && !endpoint) {
    throw new ConfigError('DYNAMODB_MODE=endpoint needs DYNAMODB_ENDPOINT=http://host:port');
  }
  const cursorSecret = text(env, 'CURSOR_SECRET') ?? (production ? undefined : DEV_CURSOR_SECRET);
  if (!cursorSecret) {
    throw new ConfigError('NODE_ENV=production needs CURSOR_SECRET (a long random string that signs page cursors)');
  }
  const jwksUrl = text(env, 'JWT_JWKS_URL');
  const jwtSecret = text(env, 'JWT_SECRET') ?? (production || jwksUrl ? undefined : DEV_JWT_SECRET);
  if (production && !jwtSecret && !jwksUrl) {
    throw new ConfigError('NODE_ENV=production needs JWT_SECRET or JWT_JWKS_URL (with JWT_ISSUER and JWT_AUDIENCE)');
  }
  if (jwksUrl && (!env.JWT_ISSUER || !env.JWT_AUDIENCE)) {
    throw new ConfigError('JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE: tokens are checked against both');
  }
  if (production && jwtSecret && (jwtSecret.length < 32 || jwtSecret === DEV_JWT_SECRET)) {
    throw new ConfigError('JWT_SECRET must be at least 32 characters in production, and not the development secret');
  }
  if (production && cursorSecret === DEV_CURSOR_SECRET) {
    throw new ConfigError('CURSOR_SECRET must not be the development secret in production');
  }
  const tableName = text(env, 'TABLE_NAME');
  const cdnPurgeUrl = text(env, 'CDN_PURGE_URL');
  if (cdnPurgeUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(cdnPurgeUrl)) {
    throw new ConfigError('CDN_PURGE_URL must be an http:// or https:// URL');
  }
  const redisUrl = text(env, 'REDIS_URL');
  if (redisUrl && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL (e.g. redis://127.0.0.1:6379)');
  }
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new ConfigError(`TABLE_NAME must be 3-255 characters of A-Z a-z 0-9 _ . -, got "${tableName}"`);
  }
  const eventSigningSecret = text(env, 'EVENT_SIGNING_SECRET');
  if (eventSigningSecret !== undefined && eventSigningSecret.length < 32) {
    throw new ConfigError('EVENT_SIGNING_SECRET must be at least 32 characters');
  }
  const dedupeWindow = integer(env, 'EVENT_DEDUPE_WINDOW');
  if (dedupeWindow < 1) throw new ConfigError(`EVENT_DEDUPE_WINDOW must be at least 1, got ${dedupeWindow}`);
  const costDetails = oneOf(env, 'COST_DETAILS') ?? 'admin';
  const metricsPort = port(env, 'METRICS_PORT');
  return {
    host: text(env, 'HOST') ?? (production ? '0.0.0.0' : '127.0.0.1'),
    port: port(env, 'PORT'),
    dataDir: path.resolve(text(env, 'DATA_DIR')),
    localPort: port(env, 'DYNAMODB_LOCAL_PORT'),
    tableName,
    mode,
    endpoint: mode === 'aws' ? undefined : endpoint,
    region: text(env, 'AWS_REGION') ?? text(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1',
    cursorSecret,
    nodeEnv,
    logLevel: oneOf(env, 'LOG_LEVEL') ?? (nodeEnv === 'test' ? 'silent' : 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT'),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    cacheMaxAgeSeconds: seconds(env, 'CACHE_MAX_AGE'),
    responseCache:
      oneOf(env, 'RESPONSE_CACHE') === 'off' || seconds(env, 'RESPONSE_CACHE_MAX_AGE') === 0
        ? undefined
        : {
            maxBytes: integer(env, 'RESPONSE_CACHE_MAX_BYTES'),
            maxAgeSeconds: seconds(env, 'RESPONSE_CACHE_MAX_AGE'),
            indexHoldMs: integer(env, 'RESPONSE_CACHE_INDEX_HOLD_MS'),
            shared: oneOf(env, 'RESPONSE_CACHE_SHARED') !== 'off',
          },
    seedDemoData: flag(env, 'SEED_DEMO_DATA'),
    auth: {
      secret: jwksUrl ? undefined : jwtSecret,
      jwksUrl,
      issuer: text(env, 'JWT_ISSUER'),
      audience: text(env, 'JWT_AUDIENCE'),
      maxAgeSeconds: parseDuration(env, 'JWT_MAX_AGE', DEFAULT_JWT_MAX_AGE_SECONDS),
    },
    limits: {
      maxDepth: integer(env, 'MAX_QUERY_DEPTH'),
      maxAliases: integer(env, 'MAX_QUERY_ALIASES'),
      maxDirectives: integer(env, 'MAX_QUERY_DIRECTIVES'),
      maxTokens: integer(env, 'MAX_QUERY_TOKENS'),
      maxCost: integer(env, 'MAX_QUERY_COST'),
      maxBodyBytes: integer(env, 'MAX_BODY_BYTES'),
      maxResponseBytes: integer(env, 'MAX_RESPONSE_BYTES'),
      maxOperationRequests: integer(env, 'MAX_OPERATION_REQUESTS'),
      maxOperationReadUnits: integer(env, 'MAX_OPERATION_READ_UNITS'),
      maxResultEntries: integer(env, 'MAX_RESULT_ENTRIES'),
      maxResultBytes: integer(env, 'MAX_RESULT_BYTES'),
      subscribeReadsPerViewer: integer(env, 'SUBSCRIBE_READS_PER_VIEWER'),
      subscribeReadsPerInstance: integer(env, 'SUBSCRIBE_READS_PER_INSTANCE'),
      subscribeReadWindowMs: integer(env, 'SUBSCRIBE_READ_WINDOW_MS'),
    },
    sockets: {
      maxSockets: integer(env, 'WS_MAX_SOCKETS'),
      maxOperationsPerSocket: integer(env, 'WS_MAX_OPERATIONS_PER_SOCKET'),
      idleTimeoutMs: integer(env, 'WS_IDLE_TIMEOUT_MS'),
      keepAliveMs: integer(env, 'WS_KEEPALIVE_MS'),
      connectionInitTimeoutMs: integer(env, 'WS_CONNECTION_INIT_TIMEOUT_MS'),
    },
    introspection: flag(env, 'GRAPHQL_INTROSPECTION', !production),
    playground: flag(env, 'PLAYGROUND', !production),
    persistedOnly: flag(env, 'PERSISTED_ONLY'),
    documentsRefreshMs: integer(env, 'DOCUMENTS_REFRESH_MS'),
    sseReplayEvents: integer(env, 'SSE_REPLAY_EVENTS'),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS'),
    // With Redis, the events come from `npm run consumer` or the Lambda: an in-process consumer
    // in every instance would publish each event once per instance.
    streamConsumer: flag(env, 'STREAM_CONSUMER', mode !== 'aws' && !redisUrl),
    redisUrl,
    cdnPurgeUrl,
    consumerGroup: text(env, 'STREAM_CONSUMER_NAME') ?? 'processor',
    consumerPort: port(env, 'CONSUMER_PORT'),
    leaseTtlMs: integer(env, 'LEASE_TTL_MS'),
    streamPollMs: integer(env, 'STREAM_POLL_MS'),
    events: { signingSecret: eventSigningSecret, dedupeWindow },
    itemCollections: flag(env, 'ITEM_COLLECTION_READS', true),
    streamConsumerName:
      text(env, 'STREAM_CONSUMER_NAME') ??
      (os
        .hostname()
        .replace(/[^A-Za-z0-9_-]/g, '-')
        .slice(0, 64) ||
        'default'),
    metrics: { token: text(env, 'METRICS_TOKEN'), port: metricsPort },
    http: {
      requestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS'),
      headersTimeoutMs: integer(env, 'HTTP_HEADERS_TIMEOUT_MS'),
      keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'),
      maxConnections: integer(env, 'MAX_CONNECTIONS'),
    },
    costDetails,
    executor: executorConfig(env),
    telemetry: telemetrySettings(env),
  };
}

/**
 * The executor settings alone: loadConfig's `executor`, and the pipeline's default for an entry
 * point that does not pass its own (so every process honours EXECUTOR).
 */
export function executorConfig(env: NodeJS.ProcessEnv = process.env): ExecutorConfig {
  // differential runs every query twice: for tests and staging. It is not refused in production,
  // so that a production-mode test server is compared like every other.
  const executor = oneOf(env, 'EXECUTOR') ?? 'graphql-js';
  return {
    executor,
    maxDocuments: integer(env, 'COMPILED_DOCUMENTS_MAX'),
    maxBytes: integer(env, 'COMPILED_DOCUMENTS_MAX_BYTES'),
  };
}

/** `key=value,key=value` (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS), values percent-decoded. */
function pairs(name: string, items: string[]): Record<string, string> {
  const entries = items.map((item) => {
    const at = item.indexOf('=');
    if (at < 1) throw new ConfigError(`${name} must be key=value pairs separated by commas, got "${item}"`);
    try {
      return [item.slice(0, at).trim(), decodeURIComponent(item.slice(at + 1).trim())] as const;
    } catch {
      throw new ConfigError(`${name} has a value that is not percent-encoded correctly: "${item}"`);
    }
  });
  return Object.fromEntries(entries);
}

/** A signal's endpoint: its own variable as given, else the base URL with the signal's path. */
const signalUrl = (own: string | undefined, base: string | undefined, path: string): string | undefined =>
  own ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}${path}`);

function telemetrySettings(env: NodeJS.ProcessEnv): TelemetrySettings {
  const disabled = flag(env, 'OTEL_SDK_DISABLED');
  const base = text(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const tracesUrl = signalUrl(text(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'), base, '/v1/traces');
  const metricsUrl = signalUrl(text(env, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'), base, '/v1/metrics');
  for (const url of [tracesUrl, metricsUrl]) {
    if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url)) {
      throw new ConfigError(`the OTLP endpoint must be an http:// or https:// URL, got "${url}"`);
    }
  }
  const sampler = oneOf(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  const ratioText = text(env, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = Number(ratioText);
  if (sampler.endsWith('traceidratio') && !(ratioText.trim() !== '' && ratio >= 0 && ratio <= 1)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio between 0 and 1, got "${ratioText}"`);
  }
  const traced = !disabled && oneOf(env, 'OTEL_TRACES_EXPORTER') !== 'none' && tracesUrl !== undefined;
  const metered = !disabled && oneOf(env, 'OTEL_METRICS_EXPORTER') !== 'none' && metricsUrl !== undefined;
  return {
    traces: traced
      ? {
          url: tracesUrl,
          sampler,
          ratio: sampler.endsWith('traceidratio') ? ratio : 1,
          maxQueueSize: integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
          maxExportBatchSize: integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
          scheduleDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY'),
        }
      : undefined,
    metrics: metered ? { url: metricsUrl, intervalMs: integer(env, 'OTEL_METRIC_EXPORT_INTERVAL') } : undefined,
    protocol: oneOf(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf',
    headers: pairs(
      'OTEL_EXPORTER_OTLP_HEADERS',
      (text(env, 'OTEL_EXPORTER_OTLP_HEADERS') ?? '')
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    ),
    timeoutMs: integer(env, 'OTEL_EXPORTER_OTLP_TIMEOUT'),
    serviceName: text(env, 'OTEL_SERVICE_NAME'),
    resourceAttributes: pairs('OTEL_RESOURCE_ATTRIBUTES', list(env, 'OTEL_RESOURCE_ATTRIBUTES')),
    resolverSpans: flag(env, 'TRACE_RESOLVERS'),
    flushTimeoutMs: integer(env, 'TELEMETRY_FLUSH_TIMEOUT_MS'),
    emf: flag(env, 'EMF_METRICS'),
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
