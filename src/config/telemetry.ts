import type { ENV_SPEC } from './spec.js';
import { ConfigError, flag, integer, oneOf, pairs, text } from './read.js';
import type { Env } from './read.js';

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
  /** TRACE_RESOLVERS: a span per resolved field (false in a process that resolves nothing). */
  resolverSpans: boolean;
}

/** What the Lambdas do at the end of each invocation (src/lambda/invocation.ts). */
export interface LambdaTelemetrySettings extends TelemetrySettings {
  /** The bound on the export at the end of an invocation. */
  flushTimeoutMs: number;
  /** Write CloudWatch EMF lines. */
  emf: boolean;
}

/** A signal's endpoint: its own variable as given, else the base URL with the signal's path. */
const signalUrl = (own: string | undefined, base: string | undefined, path: string): string | undefined =>
  own ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}${path}`);

/** The OTEL_* settings; TRACE_RESOLVERS too when the process resolves GraphQL fields. */
export function readTelemetry(env: Env, { resolvers }: { resolvers: boolean }): TelemetrySettings {
  const disabled = flag(env, 'OTEL_SDK_DISABLED');
  const base = text(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const tracesUrl = signalUrl(text(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'), base, '/v1/traces');
  const metricsUrl = signalUrl(text(env, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'), base, '/v1/metrics');
  for (const url of [tracesUrl, metricsUrl]) {
    if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url)) {
      throw new ConfigError(`the OTLP endpoint must be an http:// or https:// URL, got "${url}"`);
    }
  }
  const sampler = oneOf(env, 'OTEL_TRACES_SAMPLER');
  const ratioText = text(env, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = Number(ratioText);
  const byRatio = sampler.endsWith('traceidratio');
  if (byRatio && !(ratioText.trim() !== '' && ratio >= 0 && ratio <= 1)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio between 0 and 1, got "${ratioText}"`);
  }
  const batch = {
    maxQueueSize: integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    scheduleDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY'),
  };
  const intervalMs = integer(env, 'OTEL_METRIC_EXPORT_INTERVAL');
  const traced = !disabled && oneOf(env, 'OTEL_TRACES_EXPORTER') !== 'none' && tracesUrl !== undefined;
  const metered = !disabled && oneOf(env, 'OTEL_METRICS_EXPORTER') !== 'none' && metricsUrl !== undefined;
  return {
    traces: traced ? { url: tracesUrl, sampler, ratio: byRatio ? ratio : 1, ...batch } : undefined,
    metrics: metered ? { url: metricsUrl, intervalMs } : undefined,
    protocol: oneOf(env, 'OTEL_EXPORTER_OTLP_PROTOCOL'),
    headers: pairs(env, 'OTEL_EXPORTER_OTLP_HEADERS'),
    timeoutMs: integer(env, 'OTEL_EXPORTER_OTLP_TIMEOUT'),
    serviceName: text(env, 'OTEL_SERVICE_NAME'),
    resourceAttributes: pairs(env, 'OTEL_RESOURCE_ATTRIBUTES'),
    resolverSpans: resolvers && flag(env, 'TRACE_RESOLVERS'),
  };
}

/** A Lambda's telemetry: the OTEL_* settings and the end-of-invocation flush. */
export function readLambdaTelemetry(env: Env, options: { resolvers: boolean }): LambdaTelemetrySettings {
  return {
    ...readTelemetry(env, options),
    flushTimeoutMs: integer(env, 'TELEMETRY_FLUSH_TIMEOUT_MS'),
    emf: flag(env, 'EMF_METRICS'),
  };
}
