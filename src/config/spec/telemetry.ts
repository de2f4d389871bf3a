import type { VarSpec } from './varSpec.js';

/** OpenTelemetry (src/telemetry/): the standard variables, nothing loaded unless an OTLP endpoint is set; and what the Lambdas do at the end of an invocation. */
export const TELEMETRY_SPEC = {
  OTEL_SDK_DISABLED: {
    type: 'boolean',
    default: 'false',
    description: '`true` turns traces and OTLP metrics off whatever else is set',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_SERVICE_NAME: {
    type: 'string',
    defaultText: '`tablegraph-api`, `tablegraph-consumer`, `tablegraph-graphql-lambda` or `tablegraph-stream-lambda`',
    description: 'the `service.name` resource attribute of every span and metric',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_RESOURCE_ATTRIBUTES: {
    type: 'list',
    description: 'more resource attributes, `key=value` pairs (`deployment.environment.name=prod,service.version=1.2`)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    type: 'url',
    description:
      'the collector’s OTLP/HTTP base URL (`http://localhost:4318`): traces go to `/v1/traces`, metrics to `/v1/metrics`; unset (and no per-signal endpoint): no telemetry at all',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    type: 'url',
    description: 'the full URL traces are sent to, instead of `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: {
    type: 'url',
    description: 'the full URL metrics are sent to, instead of `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_EXPORTER_OTLP_PROTOCOL: {
    type: ['http/protobuf', 'http/json'],
    default: 'http/protobuf',
    description: 'the OTLP encoding (gRPC is not offered: the exporters stay pure JavaScript)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_EXPORTER_OTLP_HEADERS: {
    type: 'secret',
    description: 'headers of every export, `key=value` pairs (an API key of a hosted collector)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_EXPORTER_OTLP_TIMEOUT: {
    type: 'integer',
    default: '10000',
    description:
      'milliseconds an export may take; a collector that does not answer costs a dropped batch, never a request',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_TRACES_EXPORTER: {
    type: ['otlp', 'none'],
    default: 'otlp',
    description: '`none` keeps OTLP metrics but sends no spans',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_METRICS_EXPORTER: {
    type: ['otlp', 'none'],
    default: 'otlp',
    description: '`none` keeps traces but sends no metrics over OTLP (`/metrics` is served either way)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
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
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_TRACES_SAMPLER_ARG: {
    type: 'string',
    default: '1',
    description: 'the ratio of the `*traceidratio` samplers, 0 to 1 (`0.01`: one trace in a hundred)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_BSP_MAX_QUEUE_SIZE: {
    type: 'integer',
    default: '2048',
    description: 'spans waiting for export; beyond it spans are dropped and counted (`otel_spans_dropped_total`)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: {
    type: 'integer',
    default: '512',
    description: 'spans per export request',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_BSP_SCHEDULE_DELAY: {
    type: 'integer',
    default: '5000',
    description: 'milliseconds between span exports (the Lambdas flush at the end of every invocation instead)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  OTEL_METRIC_EXPORT_INTERVAL: {
    type: 'integer',
    default: '60000',
    description: 'milliseconds between OTLP metric exports',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer'],
  },
  TRACE_RESOLVERS: {
    type: 'boolean',
    default: 'false',
    description: 'a span per resolved field, for a close look at one slow operation (costly: off by default)',
    readBy: ['server', 'graphql-lambda'],
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
} as const satisfies Record<string, VarSpec>;
