/**
 * W3C Trace Context `traceparent`, read and written by hand: the header of an incoming request,
 * the attribute on an order item that the stream processing reads, the field of a change event
 * on Redis. (The SDK's propagator works on a global context this server does not keep.)
 */
import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import type { Context, SpanContext } from '@opentelemetry/api';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The span context of a `traceparent`, or undefined for anything malformed (which starts a new trace). */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== 'string' || value.length > 256) return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  // Version 00 has exactly four fields; ff is forbidden; a later version may add fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
}

/** A context whose parent is the `traceparent`'s span; the root context without a valid one. */
export function contextOf(value: unknown): Context {
  const parent = parseTraceparent(value);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

export const formatTraceparent = ({ traceId, spanId, traceFlags }: SpanContext): string =>
  `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0')}`;
