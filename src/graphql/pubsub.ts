/**
 * In-process fan-out of order events to GraphQL subscriptions. The events come from the
 * table's stream (src/streams/), so every server instance sees every change, whoever wrote it;
 * this module only hands them to the subscribers connected to this instance.
 */
import { EventEmitter } from 'node:events';
import type { OrderModel, OrderStatus } from '../table/models.js';

export interface OrderEventModel {
  type: 'ORDER_PLACED' | 'ORDER_STATUS_CHANGED';
  order: OrderModel;
  previousStatus: OrderStatus | null;
  /** ISO-8601, when DynamoDB recorded the change. */
  at: string;
}

/**
 * Events a subscriber has not taken yet. A client that reads slower than events arrive loses
 * the oldest ones rather than growing the server's memory without bound.
 */
export const MAX_PENDING_EVENTS = 100;

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
   * The events that `accept` lets through, as an async iterator. Its `return()` removes the
   * listener at once, also while a `next()` is waiting for an event (that `next()` then
   * resolves as done): an async generator could only run its cleanup after the next event
   * arrived, so every abandoned subscription would stay registered until then.
   */
  subscribe(accept: (event: OrderEventModel) => boolean): AsyncIterableIterator<OrderEventModel> {
    const pending: OrderEventModel[] = [];
    let waiting: ((result: IteratorResult<OrderEventModel>) => void) | undefined;
    let done = false;
    const listener = (event: OrderEventModel) => {
      if (!accept(event)) return;
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ value: event, done: false });
        return;
      }
      pending.push(event);
      if (pending.length > MAX_PENDING_EVENTS) pending.shift();
    };
    const finish = (): Promise<IteratorResult<OrderEventModel>> => {
      if (!done) {
        done = true;
        this.emitter.off('event', listener);
        pending.length = 0;
        waiting?.({ value: undefined, done: true });
        waiting = undefined;
      }
      return Promise.resolve({ value: undefined, done: true });
    };
    this.emitter.on('event', listener);
    return {
      next: () => {
        const event = pending.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (waiting = resolve));
      },
      return: finish,
      throw: async (error: unknown) => {
        await finish();
        throw error;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  get subscriberCount(): number {
    return this.emitter.listenerCount('event');
  }
}
