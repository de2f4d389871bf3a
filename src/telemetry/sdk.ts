/**
 * The OpenTelemetry SDK, assembled from its parts: imported by start.ts only when an OTLP
 * endpoint is configured, so a process without one loads none of it.
 *
 * - Spans: the configured sampler, a batch processor with a bounded queue, OTLP over HTTP
 *   (protobuf or JSON). A span that finds the queue full, and every span of an export that
 *   failed (a collector that is down or slow), is dropped and counted
 *   (`otel_spans_dropped_total`): export runs off the request path, so it never slows a request.
 * - Metrics: the prom-client registries, exported over OTLP at the export interval (promBridge.ts).
 */
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { ReadableSpan, Sampler, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Context, Tracer } from '@opentelemetry/api';
import type { TelemetrySettings } from '../config/index.js';
import { PrometheusProducer } from './promBridge.js';

export interface Sdk {
  tracer: Tracer | undefined;
  producer: PrometheusProducer | undefined;
  /** Spans dropped so far: a full queue, or an export that failed. */
  droppedSpans(): number;
  /** Exports what is queued (the Lambdas call it before they return). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

type TraceSettings = NonNullable<TelemetrySettings['traces']>;

function samplerOf({ sampler, ratio }: TraceSettings): Sampler {
  const root = sampler.endsWith('traceidratio')
    ? new TraceIdRatioBasedSampler(ratio)
    : sampler.endsWith('always_off')
      ? new AlwaysOffSampler()
      : new AlwaysOnSampler();
  return sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** The batch processor, with the queue bound and the losses counted on this side of it. */
class CountingProcessor implements SpanProcessor {
  queued = 0;
  dropped = 0;
  readonly #inner: BatchSpanProcessor;

  constructor(
    exporter: SpanExporter,
    private readonly settings: TraceSettings,
    timeoutMs: number,
  ) {
    const counting: SpanExporter = {
      export: (spans: ReadableSpan[], done: (result: ExportResult) => void) =>
        exporter.export(spans, (result) => {
          this.queued -= spans.length;
          if (result.code !== ExportResultCode.SUCCESS) this.dropped += spans.length;
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    };
    this.#inner = new BatchSpanProcessor({
      exporter: counting,
      maxQueueSize: settings.maxQueueSize,
      maxExportBatchSize: Math.min(settings.maxExportBatchSize, settings.maxQueueSize),
      scheduledDelayMillis: settings.scheduleDelayMs,
      exportTimeoutMillis: timeoutMs,
    });
  }

  onStart(span: Span, context: Context): void {
    this.#inner.onStart(span, context);
  }

  onEnd(span: ReadableSpan): void {
    // Spans being exported count too: the bound holds whatever the collector's pace.
    if (this.queued >= this.settings.maxQueueSize) {
      this.dropped++;
      return;
    }
    this.queued++;
    this.#inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

export function startSdk(settings: TelemetrySettings, serviceName: string): Sdk {
  const resource = defaultResource().merge(
    resourceFromAttributes({ 'service.name': settings.serviceName ?? serviceName, ...settings.resourceAttributes }),
  );
  const exporterOptions = { headers: settings.headers, timeoutMillis: settings.timeoutMs };
  const json = settings.protocol === 'http/json';

  let provider: TracerProvider | undefined;
  let processor: CountingProcessor | undefined;
  if (settings.traces) {
    const options = { ...exporterOptions, url: settings.traces.url };
    const exporter = json ? new JsonTraceExporter(options) : new ProtoTraceExporter(options);
    processor = new CountingProcessor(exporter, settings.traces, settings.timeoutMs);
    provider = new TracerProvider({
      resource,
      sampler: samplerOf(settings.traces),
      spanProcessors: [processor],
    });
  }

  let meters: MeterProvider | undefined;
  let producer: PrometheusProducer | undefined;
  if (settings.metrics) {
    const options = { ...exporterOptions, url: settings.metrics.url };
    producer = new PrometheusProducer(resource);
    meters = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: json ? new JsonMetricExporter(options) : new ProtoMetricExporter(options),
          exportIntervalMillis: settings.metrics.intervalMs,
          exportTimeoutMillis: Math.min(settings.timeoutMs, settings.metrics.intervalMs),
          metricProducers: [producer],
        }),
      ],
    });
  }

  return {
    tracer: provider?.getTracer('tablegraph'),
    producer,
    droppedSpans: () => processor?.dropped ?? 0,
    flush: async () => {
      await Promise.all([provider?.forceFlush({ timeoutMillis: settings.timeoutMs }), meters?.forceFlush()]);
    },
    shutdown: async () => {
      await Promise.all([provider?.shutdown(), meters?.shutdown()]);
    },
  };
}
