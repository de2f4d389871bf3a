/**
 * The one operation pipeline every transport is a thin adapter over (HTTP in
 * src/transports/http, WebSocket in src/transports/ws, SSE in src/transports/sse, API Gateway
 * in src/transports/lambda for the Lambda entry points of src/lambda), all through one request
 * core, `serve` (serve.ts), which runs, each stage in a folder of its own:
 *
 * - `admission` (admission/): trusted documents (documents/) and persisted-only, CSRF
 *   prevention, token limit, validation, introspection, cost limit, subscriptions only over
 *   WebSocket and SSE;
 * - `execution` (execution/): the viewer, fresh loaders and a fresh cost record per request
 *   and per subscription event, the executor (EXECUTOR: planned in plan/, or graphql-js)
 *   and the operation meter; the response cache (responseCache/) before it, for queries;
 * - `reporter` (report/): masking by the one formatter, `extensions.cost`, the size ceiling,
 *   the status, the caching headers, the log line and the metrics.
 *
 * A new policy goes into exactly one of them: a limit on what a document may ask for into
 * admission, how operations execute (another executor) into execution's choice of executor, anything
 * about the answer (a size ceiling) into the reporter. Policy about schema members (who may read
 * a field, what it costs) goes into schema.graphql as a directive (schema/schemaPolicy.ts).
 */
import type { Logger } from 'pino';
import { executorConfig } from '../config/index.js';
import type { AuthConfig, ExecutorConfig, QueryLimits } from '../config/index.js';
import type { DataSources } from '../db/loaders.js';
import { EventFanOut } from '../graphql/eventFanOut.js';
import { createAdmission } from './admission/admission.js';
import { createFormatError } from './report/errorMasking.js';
import { createExecution } from './execution/execution.js';
import type { Execute } from './execution/execution.js';
import type { Metrics } from './report/metrics.js';
import { manifestOperationNames } from './report/metricLabels.js';
import { traceResolvers } from './report/operationSpans.js';
import { meterSchema } from './execution/meter.js';
import type { OperationBudgets } from './execution/meter.js';
import { createReporter } from './report/report.js';
import type { CostDetails } from './report/extensions.js';
import type { ResponseCache } from './responseCache/responseCache.js';
import { buildSchema } from './schema/schema.js';
import { createServe } from './serve.js';
import type { TrustedDocuments } from './documents/trustedDocuments.js';

export interface PipelineOptions {
  data: DataSources;
  log: Logger;
  auth: AuthConfig;
  limits: QueryLimits;
  introspection: boolean;
  persistedOnly: boolean;
  /** The trusted documents: the server's manifest and the registry's (kept fresh by its poller). */
  documents: TrustedDocuments;
  /** Where subscriptions listen; a fresh one when not given (no events then, e.g. on Lambda). */
  events?: EventFanOut;
  /** Where durations and errors are counted (the HTTP server exposes them at /metrics). */
  metrics?: Metrics | undefined;
  /** Who sees capacity units in `extensions.cost` (report/extensions.ts); default admins only. */
  costDetails?: CostDetails;
  /** The response cache (responseCache/); none: every query executes. */
  cache?: ResponseCache | undefined;
  /** Answer `extensions.cache` to a request that asks for it (`extensions: { cache: true }`): development only. */
  explainCache?: boolean;
  /**
   * What executes operations (EXECUTOR, COMPILED_DOCUMENTS_MAX_BYTES); read from the environment when not
   * given, so every entry point honours the setting.
   */
  executor?: ExecutorConfig;
  /** An executor brought by the caller for every operation, instead of EXECUTOR's (a test's: test/support/). */
  execute?: Execute | undefined;
  /** Seconds an anonymous GET of public data may be cached by browsers and CDNs (CACHE_MAX_AGE); 0: never. */
  cacheMaxAgeSeconds?: number;
}

export type Pipeline = ReturnType<typeof createPipeline>;

/** What one operation may spend while it runs (meter.ts), from the limits. */
export const operationBudgetsOf = (limits: QueryLimits): OperationBudgets => ({
  requests: limits.maxOperationRequests,
  readCapacityUnits: limits.maxOperationReadUnits,
  entries: limits.maxResultEntries,
  bytes: limits.maxResultBytes,
});

export function createPipeline({
  data,
  log,
  auth,
  limits,
  introspection,
  persistedOnly,
  documents,
  events = new EventFanOut(),
  metrics,
  costDetails = 'admin',
  cache,
  explainCache = false,
  executor = executorConfig(),
  execute,
  cacheMaxAgeSeconds = 0,
}: PipelineOptions) {
  // Every object and list field reports to the operation's meter (meter.ts).
  const schema = meterSchema(cache?.schema ?? buildSchema());
  traceResolvers(schema);
  const formatError = createFormatError(log, { hideSuggestions: !introspection });
  const admission = createAdmission({ schema, limits, introspection, persistedOnly, documents });
  const execution = createExecution({
    schema,
    data,
    log,
    auth,
    events,
    executor,
    execute,
    onFallback: (fallback) => metrics?.executorFallbacks.inc({ class: fallback }),
    budgets: operationBudgetsOf(limits),
    subscribeReads: {
      perViewer: limits.subscribeReadsPerViewer,
      perInstance: limits.subscribeReadsPerInstance,
      windowMs: limits.subscribeReadWindowMs,
    },
  });
  // The server's own trusted documents are compiled before the first request asks for them.
  execution.precompile(documents.own.values());
  const reporter = createReporter({
    log,
    metrics,
    formatError,
    costDetails,
    maxResponseBytes: limits.maxResponseBytes,
    // The server's own operations only: app manifests must not multiply the metric series.
    knownOperations: manifestOperationNames(documents.own.values()),
  });
  return {
    schema,
    limits,
    log,
    events,
    cache,
    formatError,
    documents,
    admission,
    execution,
    reporter,
    serve: createServe({ admission, execution, reporter, cache, explainCache, costDetails, cacheMaxAgeSeconds }),
  };
}
