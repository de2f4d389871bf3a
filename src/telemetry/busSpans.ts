/**
 * The fan-out step of an order event's trace: on each instance that receives the event from
 * Redis, a CONSUMER span under the stream processing's (the event's `traceparent`). The event
 * handed to this instance's subscribers carries the receive span's `traceparent` instead, so
 * each subscriber's execution hangs under the instance that delivered it.
 */
import { SpanKind } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { ATTR } from './semconv.js';
import { contextOf, formatTraceparent } from './traceparent.js';
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
