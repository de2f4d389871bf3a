/**
 * What both Lambdas do at the end of every invocation, before they return: a function is frozen
 * once it has answered, so nothing queued would leave until the next invocation (or never).
 *
 * 1. The metrics as CloudWatch EMF lines in the function's log (telemetry/emf.ts), when
 *    EMF_METRICS is on; LOG_LEVEL=silent silences them with the rest of the log.
 * 2. The spans and OTLP metrics flushed to the collector (when OTEL_* configures one), for at most
 *    TELEMETRY_FLUSH_TIMEOUT_MS and never past the invocation's own deadline. What is not out by
 *    then stays queued or is dropped and counted (`otel_spans_dropped_total`): the invocation's
 *    answer never waits longer, and never fails for it.
 */
import type { Context } from 'aws-lambda';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { LambdaTelemetrySettings, ProcessConfig } from '../config/index.js';
import { settledWithin } from '../settledWithin.js';
import { EmfWriter } from '../telemetry/emf.js';
import type { Telemetry } from '../telemetry/start.js';

/** Time kept back from the invocation's deadline for returning the answer. */
const DEADLINE_MARGIN_MS = 200;

export interface InvocationEndOptions {
  config: Pick<ProcessConfig, 'logLevel'> & { telemetry: LambdaTelemetrySettings };
  /** The function's service name (the `service` dimension of its EMF lines). */
  service: string;
  /** The function's metrics (pipeline/report/metrics.ts createMetrics). */
  registry: Registry;
  telemetry?: Telemetry | undefined;
  log: Pick<Logger, 'warn'>;
  /** Where EMF lines go (tests); stdout by default. */
  writeEmf?: ((line: string) => void) | undefined;
}

/** The function to await at the end of each invocation (never rejects). */
export function invocationEnd({
  config,
  service,
  registry,
  telemetry,
  log,
  writeEmf,
}: InvocationEndOptions): (context?: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<void> {
  const emf =
    config.telemetry.emf && config.logLevel !== 'silent'
      ? new EmfWriter({ registry, service, ...(writeEmf ? { write: writeEmf } : {}) })
      : undefined;
  return async (context) => {
    try {
      await emf?.flush();
    } catch (error) {
      log.warn({ err: error }, 'EMF metrics not written');
    }
    if (!telemetry) return;
    const left = context?.getRemainingTimeInMillis?.();
    const bound = Math.max(
      0,
      Math.min(config.telemetry.flushTimeoutMs, left === undefined ? Infinity : left - DEADLINE_MARGIN_MS),
    );
    const flushed = await settledWithin(
      telemetry.flush().catch((error: unknown) => log.warn({ err: error }, 'telemetry flush failed')),
      bound,
    );
    if (!flushed) log.warn({ timeoutMs: bound }, 'telemetry flush did not finish in time; the rest is exported later');
  };
}
