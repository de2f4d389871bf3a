/**
 * Fan-out of order events to the GraphQL subscriptions of this instance. The events come from
 * the table's stream through an event bus (src/events/): in-process when this instance runs its
 * own stream consumer, Redis when standalone consumers or the Lambda feed many instances. Either
 * way every instance sees every change, whoever wrote it; this module listens to the bus once
 * and hands each event to the subscribers connected here that `accept` it.
 */
import { EventEmitter, on } from 'node:events';
import { InProcessEventBus } from '../events/eventBus.js';
import type { EventBus } from '../events/eventBus.js';
import type { OrderEventModel } from '../events/orderEvent.js';

export type { OrderEventModel } from '../events/orderEvent.js';

export class OrderEvents {
  private readonly emitter = new EventEmitter();
  readonly bus: EventBus;
  private readonly unsubscribe: () => void;

  constructor(bus: EventBus = new InProcessEventBus()) {
    // Each subscription adds a listener; thousands of subscribers are fine.
    this.emitter.setMaxListeners(0);
    this.bus = bus;
    this.unsubscribe = bus.subscribe((event) => this.emitter.emit('event', event));
  }

  /** Sends `event` over the bus (to every instance on it, this one included). */
  publish(event: OrderEventModel): Promise<void> {
    return this.bus.publish(event);
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

  /** Stops listening to the bus (the bus itself belongs to whoever made it). */
  detach(): void {
    this.unsubscribe();
  }
}
