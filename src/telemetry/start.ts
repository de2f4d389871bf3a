/**
 * Starts OpenTelemetry for a process when its settings ask for it (an OTLP endpoint, see
 * src/config/telemetry.ts), and loads nothing otherwise: the SDK module is imported here, on demand.
 */
import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import type { TelemetrySettings } from '../config/index.js';
import { settledWithin } from '../settledWithin.js';
import type { Sdk } from './sdk.js';
import { setTracing } from './tracing.js';

/**
 * A running SDK. `flush` and `shutdown` never reject: a collector that cannot take the spans
 * costs those spans (dropped and counted), never a request, an invocation or a clean stop.
 */
export interface Telemetry {
  /** Exports what is queued now. */
  flush(): Promise<void>;
  /** Flushes and stops exporting, within OTEL_EXPORTER_OTLP_TIMEOUT; tracing is off afterwards. */
  shutdown(): Promise<void>;
  droppedSpans(): number;
}

let running: Sdk | undefined;

/** Undefined when no signal is configured (then nothing was loaded). */
export async function startTelemetry(settings: TelemetrySettings, serviceName: string): Promise<Telemetry | undefined> {
  if (!settings.traces && !settings.metrics) return undefined;
  const { startSdk } = await import('./sdk.js');
  const sdk = startSdk(settings, serviceName);
  running = sdk;
  if (sdk.tracer) setTracing({ tracer: sdk.tracer, resolverSpans: settings.resolverSpans });
  return {
    flush: () => sdk.flush().catch(() => undefined),
    shutdown: async () => {
      if (running === sdk) {
        running = undefined;
        setTracing(undefined);
      }
      // Bounded: a collector that never answers would otherwise hold the stop for an export
      // timeout per batch still queued.
      await settledWithin(sdk.shutdown(), settings.timeoutMs);
    },
    droppedSpans: () => sdk.droppedSpans(),
  };
}

/**
 * Hands a process's Prometheus registry to the OTLP metric export (same names, same labels)
 * and adds the dropped-spans counter to it; nothing while telemetry is off.
 */
export function observeRegistry(registry: Registry): void {
  const sdk = running;
  if (!sdk) return;
  sdk.producer?.registries.add(registry);
  if (!sdk.tracer) return;
  new Counter({
    name: 'otel_spans_dropped_total',
    help: 'Spans dropped before export: the export queue was full, or the collector did not take them',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sdk.droppedSpans());
    },
  });
}

/** Stops exporting `registry` (a server that stops). */
export function releaseRegistry(registry: Registry): void {
  running?.producer?.registries.delete(registry);
}
