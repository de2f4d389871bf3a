/** The order change that subscriptions deliver, as it travels on an event bus. */
import type { OrderModel, OrderStatus } from '../table/models.js';

export interface OrderEventModel {
  type: 'ORDER_PLACED' | 'ORDER_STATUS_CHANGED';
  /**
   * The stream record's SequenceNumber (a decimal string): one change, however often it is
   * published (a replay, a hand-over, the Lambda and a consumer). Each instance delivers a
   * `seq` once; SSE uses it as the event id.
   */
  seq: string;
  order: OrderModel;
  previousStatus: OrderStatus | null;
  /** ISO-8601, when DynamoDB recorded the change. */
  at: string;
  /** W3C trace context of the write that caused the change, when it was traced. */
  traceparent?: string;
}
