/**
 * The span of one stream record's processing, in the trace of the write that made the change:
 * the write left its `traceparent` on the item (writes/placeOrder.ts, writes/orderStatus.ts do
 * on an order's details item), and the record's new image carries it. A MODIFY whose image kept the
 * old value (a write that was not traced) starts a trace of its own instead of joining a past
 * one. The soldCount calls are counted and get spans through `costed`, like a request's, and
 * the events the record publishes carry the span's `traceparent` on to the subscribers.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ChangeEvent } from '../events/changeEvent.js';
import { SpanKind } from '@opentelemetry/api';
import { newRequestCost } from '../db/capacity.js';
import { costed } from '../db/client.js';
import { startRequestTrace } from '../telemetry/requestTrace.js';
import type { RequestTrace } from '../telemetry/requestTrace.js';
import { ATTR, TG } from '../telemetry/semconv.js';
import { contextOf } from '../telemetry/traceparent.js';
import { tracing } from '../telemetry/tracing.js';

export interface RecordTrace {
  trace: RequestTrace;
  /** The processing's client: counts and traces its calls. */
  doc: DynamoDBDocumentClient;
}

const traceparentIn = (image: Record<string, unknown> | undefined): string | undefined => {
  const value = (image?.traceparent as { S?: string } | undefined)?.S;
  return typeof value === 'string' ? value : undefined;
};

/** Undefined while tracing is off (or the record's trace is not sampled). */
export function startRecordTrace(
  doc: DynamoDBDocumentClient,
  record: {
    eventName?: string | undefined;
    dynamodb?:
      | {
          NewImage?: Record<string, unknown> | undefined;
          OldImage?: Record<string, unknown> | undefined;
          SequenceNumber?: string | undefined;
        }
      | undefined;
  },
  event: Pick<ChangeEvent, 'entity' | 'type' | 'topics'>,
): RecordTrace | undefined {
  if (!tracing()) return undefined;
  const written = traceparentIn(record.dynamodb?.NewImage);
  const fresh = written !== undefined && written !== traceparentIn(record.dynamodb?.OldImage) ? written : undefined;
  const cost = newRequestCost();
  const trace = startRequestTrace(cost, fresh ? { context: contextOf(fresh) } : undefined, {
    name: `process ${event.type}`,
    kind: SpanKind.CONSUMER,
    attributes: {
      [ATTR.MESSAGING_SYSTEM]: 'aws_dynamodb_streams',
      [ATTR.MESSAGING_OPERATION_TYPE]: 'process',
      [ATTR.MESSAGING_OPERATION_NAME]: record.eventName ?? 'unknown',
      [ATTR.MESSAGING_MESSAGE_ID]: record.dynamodb?.SequenceNumber ?? '',
      [TG.EVENT_TYPE]: event.type,
      [TG.EVENT_ENTITY]: event.entity,
      // The event's first topic (an order's own, `order:<orderId>`): what changed, in the terms subscribers use.
      [TG.EVENT_TOPIC]: event.topics[0] ?? '',
    },
  });
  return trace ? { trace, doc: costed(doc, cost) } : undefined;
}
