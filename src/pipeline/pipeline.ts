/**
 * The one operation pipeline every transport is a thin adapter over (HTTP in
 * src/transports/http, WebSocket in src/transports/ws, SSE in src/transports/sse, API Gateway
 * in src/transports/lambda for the Lambda entry points of src/lambda):
 *
 * - `admission` (admission.ts): trusted documents and persisted-only, token limit,
 *   validation, introspection, cost limit, subscriptions only over WebSocket and SSE;
 * - `execution` (execution.ts): the viewer, fresh loaders and a fresh cost record per request
 *   and per subscription event, the executor (graphql-js, compiled, or both compared), the
 *   operation meter and the response cache;
 * - `reporter` (report.ts): masking by the one formatter, `extensions.cost`, the log line and
 *   the metrics.
 *
 * A new policy goes into exactly one of them: a limit on what a document may ask for into
 * admission, how operations execute (another executor) into execution's `run`, anything about the
 * answer (a size ceiling) into the reporter. Policy about schema members (who may read a field,
 * what it costs) goes into schema.graphql as a directive (schemaPolicy.ts).
 */
import type { Logger } from 'pino';
import { executorConfig } from '../config/index.js';
import type { AuthConfig, ExecutorConfig, QueryLimits } from '../config/index.js';
import type { DataSources } from '../db/loaders.js';
import { EventFanOut } from '../graphql/eventFanOut.js';
import { createAdmission } from './admission.js';
import { createCsrfCheck } from './csrf.js';
import { createFormatError } from './errorMasking.js';
import { createExecution } from './execution.js';
import type { Metrics } from './metrics.js';
import { manifestOperationNames } from './metricLabels.js';
import { traceResolvers } from './operationSpans.js';
import { meterSchema } from './meter.js';
import { createReporter } from './report.js';
import type { CostDetails } from './report.js';
import type { ResponseCache } from './responseCache/responseCache.js';
import { buildSchema } from './schema.js';
import type { TrustedDocuments } from './trustedDocuments.js';

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
  /** Who sees capacity units in `extensions.cost` (report.ts); default admins only. */
  costDetails?: CostDetails;
  /** The response cache (responseCache/); none: every query executes. */
  cache?: ResponseCache | undefined;
  /** Answer `extensions.cache` to a request that asks for it (`extensions: { cache: true }`): development only. */
  explainCache?: boolean;
  /**
   * What executes operations (EXECUTOR, COMPILED_DOCUMENTS_*); read from the environment when not
   * given, so every entry point honours the setting.
   */
  executor?: ExecutorConfig;
}

export type Pipeline = ReturnType<typeof createPipeline>;

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
}: PipelineOptions) {
  // Every object and list field reports to the operation's meter (meter.ts).
  const schema = meterSchema(cache?.schema ?? buildSchema());
  traceResolvers(schema);
  const formatError = createFormatError(log, { hideSuggestions: !introspection });
  const admission = createAdmission({ schema, limits, introspection, persistedOnly, documents });
  const execution = createExecution({
    data,
    log,
    auth,
    events,
    cache,
    executor,
    onFallback: (fallback) => metrics?.executorFallbacks.inc({ class: fallback }),
    onDifference: (part) => metrics?.executorDifferences.inc({ part }),
    describe: admission.describe,
    budgets: {
      requests: limits.maxOperationRequests,
      readCapacityUnits: limits.maxOperationReadUnits,
      entries: limits.maxResultEntries,
      bytes: limits.maxResultBytes,
    },
    subscribeReads: {
      perViewer: limits.subscribeReadsPerViewer,
      perInstance: limits.subscribeReadsPerInstance,
      windowMs: limits.subscribeReadWindowMs,
    },
  });
  // The server's own trusted documents are compiled before the first request asks for them.
  execution.precompile(schema, documents.own.values());
  return {
    schema,
    limits,
    log,
    events,
    cache,
    explainCache,
    formatError,
    documents,
    csrf: createCsrfCheck(documents, { maxTokens: limits.maxTokens }),
    admission,
    execution,
    reporter: createReporter({
      log,
      metrics,
      formatError,
      costDetails,
      maxResponseBytes: limits.maxResponseBytes,
      // The server's own operations only: app manifests must not multiply the metric series.
      knownOperations: manifestOperationNames(documents.own.values()),
    }),
  };
}
