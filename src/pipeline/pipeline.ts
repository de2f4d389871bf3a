/**
 * The one operation pipeline every transport is a thin adapter over (HTTP in
 * src/transports/http, WebSocket in src/transports/ws, Lambda in src/lambda):
 *
 * - `admission` (admission.ts): token limit, validation, introspection, cost limit,
 *   persisted-only, subscriptions only over WebSocket;
 * - `execution` (execution.ts): the viewer, fresh loaders and a fresh cost record per request
 *   and per subscription event;
 * - `reporter` (report.ts): masking by the one formatter, `extensions.cost`, the log line and
 *   the metrics.
 *
 * A new policy goes into exactly one of them: a limit on what a document may ask for into
 * admission, how operations execute (another executor) into execution's `run`, anything about the
 * answer (a size ceiling) into the reporter.
 */
import type { Logger } from 'pino';
import type { AuthConfig, QueryLimits } from '../config.js';
import type { DataSources } from '../db/loaders.js';
import { OrderEvents } from '../graphql/pubsub.js';
import { createAdmission } from './admission.js';
import { createFormatError } from './errorMasking.js';
import { createExecution } from './execution.js';
import type { Metrics } from './metrics.js';
import { manifestOperationNames } from './metricLabels.js';
import { traceResolvers } from './operationSpans.js';
import { createReporter } from './report.js';
import type { CostDetails } from './report.js';
import { buildSchema } from './schema.js';

export interface PipelineOptions {
  data: DataSources;
  log: Logger;
  auth: AuthConfig;
  limits: QueryLimits;
  introspection: boolean;
  persistedOnly: boolean;
  /** The persisted-documents manifest (sha256 hex -> document). */
  documents: ReadonlyMap<string, string>;
  /** Where subscriptions listen; a fresh one when not given (no events then, e.g. on Lambda). */
  events?: OrderEvents;
  /** Where durations and errors are counted (the HTTP server exposes them at /metrics). */
  metrics?: Metrics | undefined;
  /** Who sees capacity units in `extensions.cost` (report.ts); default admins only. */
  costDetails?: CostDetails;
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
  events = new OrderEvents(),
  metrics,
  costDetails = 'admin',
}: PipelineOptions) {
  const schema = buildSchema();
  traceResolvers(schema);
  const formatError = createFormatError(log, { hideSuggestions: !introspection });
  const admission = createAdmission({ schema, limits, introspection, persistedOnly, documents });
  return {
    schema,
    limits,
    log,
    events,
    formatError,
    admission,
    execution: createExecution({ data, log, auth, events, describe: admission.describe }),
    reporter: createReporter({
      log,
      metrics,
      formatError,
      costDetails,
      maxResponseBytes: limits.maxResponseBytes,
      knownOperations: manifestOperationNames(documents.values()),
    }),
  };
}
