/** The order change that subscriptions deliver, as it travels on an event bus. */
import type { OrderModel, OrderStatus } from '../table/models.js';

export interface OrderEventModel {
  type: 'ORDER_PLACED' | 'ORDER_STATUS_CHANGED';
  order: OrderModel;
  previousStatus: OrderStatus | null;
  /** ISO-8601, when DynamoDB recorded the change. */
  at: string;
  /**
   * The stream record's SequenceNumber (a decimal string): orders events, and is the `id:` of
   * a Server-Sent Event, so a reconnecting client can resume after it.
   */
  seq?: string | undefined;
  /**
   * W3C `traceparent` of the stream processing that found the change, while it is traced: each
   * subscriber's execution of the event joins that trace (src/telemetry/). Optional: a bus
   * carries events without it unchanged.
   */
  traceparent?: string;
}
