/**
 * In-process fan-out of order events to GraphQL subscriptions. The events come from the
 * table's stream (src/streams/), so every server instance sees every change, whoever wrote it;
 * this module only hands them to the subscribers connected to this instance.
 */
import { EventEmitter, on } from 'node:events';
import type { OrderModel, OrderStatus } from '../table/models.js';

export interface OrderEventModel {
  type: 'ORDER_PLACED' | 'ORDER_STATUS_CHANGED';
  order: OrderModel;
  previousStatus: OrderStatus | null;
  /** ISO-8601, when DynamoDB recorded the change. */
  at: string;
}

export class OrderEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Each subscription adds a listener; thousands of subscribers are fine.
    this.emitter.setMaxListeners(0);
  }

  publish(event: OrderEventModel): void {
    this.emitter.emit('event', event);
  }

  /**
   * The events that `accept` lets through, as an async iterator that ends (and removes its
   * listener) when the subscriber goes away or `signal` aborts.
   */
  async *subscribe(accept: (event: OrderEventModel) => boolean, signal?: AbortSignal): AsyncGenerator<OrderEventModel> {
    try {
      for await (const [event] of on(this.emitter, 'event', signal ? { signal } : {})) {
        if (accept(event as OrderEventModel)) yield event as OrderEventModel;
      }
    } catch (error) {
      if ((error as { name?: string }).name !== 'AbortError') throw error;
    }
  }

  get subscriberCount(): number {
    return this.emitter.listenerCount('event');
  }
}
