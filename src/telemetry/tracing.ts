/**
 * Whether this process traces, and with what. Unset (the default) every tracing hook is one
 * check of `tracing()` and nothing else: the SDK is only loaded by start.ts when an exporter
 * is configured. Contexts are passed explicitly (a request's RequestTrace travels with its cost
 * record), never through a global context manager: a span's parent is named where the span is
 * made, and no span depends on a context surviving a library's callbacks
 * (docs/decisions/telemetry-explicit-context.md says why, and what AsyncLocalStorage costs now).
 */
import type { Tracer } from '@opentelemetry/api';

export interface Tracing {
  tracer: Tracer;
  /** TRACE_RESOLVERS: a span per resolved field. */
  resolverSpans: boolean;
}

let active: Tracing | undefined;

export const tracing = (): Tracing | undefined => active;

/** Called once by start.ts (and by tests that trace in process); undefined stops tracing. */
export function setTracing(value: Tracing | undefined): void {
  active = value;
}

/** Milliseconds since the epoch, finer than Date.now(): a span's end time taken now, set later. */
export const now = (): number => performance.timeOrigin + performance.now();
