/**
 * An order change as the stream processor publishes it, an event bus carries it and the
 * subscriptions deliver it (the schema's `OrderEvent`).
 */
import type { OrderModel, OrderStatus } from '../table/models.js';

export interface OrderEventModel {
  type: 'ORDER_PLACED' | 'ORDER_STATUS_CHANGED';
  /**
   * The stream record's SequenceNumber (a decimal string): one change, however often it is
   * published (a replay, a hand-over, the Lambda and a consumer). Each instance delivers a
   * `seq` once (src/graphql/orderEvents.ts); SSE uses it as the event id.
   */
  seq: string;
  /** The order after the change (the record's new image). */
  order: OrderModel;
  /** The status before the change; null for ORDER_PLACED. */
  previousStatus: OrderStatus | null;
  /** ISO-8601, when DynamoDB recorded the change (ApproximateCreationDateTime: whole seconds on AWS). */
  at: string;
  /**
   * W3C trace context of the record's processing (a span in the trace of the write that caused
   * the change), when traced: each subscriber's execution joins that trace.
   */
  traceparent?: string;
}
