/**
 * The fan-out step of a change event's trace: on each instance that receives the event from
 * Redis, a CONSUMER span under the stream processing's (the event's `traceparent`). The event
 * handed to this instance's subscribers carries the receive span's `traceparent` instead, so
 * each subscriber's execution hangs under the instance that delivered it.
 */
import { SpanKind } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { ATTR, TG } from './semconv.js';
import { contextOf, formatTraceparent, parseTraceparent } from './traceparent.js';
import { tracing } from './tracing.js';

/** Undefined while tracing is off or the event is not part of a sampled trace. */
export function startReceiveSpan(
  channel: string,
  traceparent: unknown,
): { span: Span; traceparent: string } | undefined {
  const active = tracing();
  if (!active || typeof traceparent !== 'string') return undefined;
  const span = active.tracer.startSpan(
    `receive ${channel}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [ATTR.MESSAGING_SYSTEM]: 'redis',
        [ATTR.MESSAGING_DESTINATION_NAME]: channel,
        [ATTR.MESSAGING_OPERATION_TYPE]: 'receive',
      },
    },
    contextOf(traceparent),
  );
  if (!span.isRecording()) return undefined;
  return { span, traceparent: formatTraceparent(span.spanContext()) };
}

/**
 * A response-cache eviction in the traces of the writes that caused it: a span under the first
 * write's context, linked to the others (a batch of stream records carries several writes).
 * `channel` names the Redis channel it came over; without one it came from this instance's own
 * stream consumer. Returns what `evict` returns, traced or not.
 */
export function traceInvalidation(
  traceparents: readonly string[] | undefined,
  tags: number,
  evict: () => number,
  channel?: string,
): number {
  const active = tracing();
  const [first, ...others] = traceparents ?? [];
  if (!active || first === undefined) return evict();
  const links = others.flatMap((other) => {
    const context = parseTraceparent(other);
    return context ? [{ context }] : [];
  });
  const span = active.tracer.startSpan(
    'invalidate response cache',
    {
      kind: channel ? SpanKind.CONSUMER : SpanKind.INTERNAL,
      attributes: {
        [TG.CACHE_TAGS]: tags,
        ...(channel
          ? {
              [ATTR.MESSAGING_SYSTEM]: 'redis',
              [ATTR.MESSAGING_DESTINATION_NAME]: channel,
              [ATTR.MESSAGING_OPERATION_TYPE]: 'process',
            }
          : {}),
      },
      links,
    },
    contextOf(first),
  );
  try {
    const evicted = evict();
    span.setAttribute(TG.CACHE_EVICTED, evicted);
    return evicted;
  } finally {
    span.end();
  }
}
