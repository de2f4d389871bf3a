/**
 * Where change events travel between the stream processing that finds them and the server
 * instances whose subscribers want them. Two implementations: in-process (one instance runs its
 * own stream consumer: the default, no infrastructure) and Redis pub/sub (N API instances fed by
 * standalone consumers or the Lambda handler; src/events/redisEventBus.ts).
 *
 * A bus carries every event to every subscribed instance; filtering per subscriber (the access
 * rules) happens in the GraphQL layer, never here.
 */
import type { ChangeEvent } from './changeEvent.js';
import type { RefusalCounter } from './signedEnvelope.js';

export type ChangeEventListener = (event: ChangeEvent) => void;

/** What /readyz details and the metrics say about a bus. */
export interface EventBusHealth {
  kind: 'in-process' | 'redis';
  /** `up` when events flow; a Redis bus is `down` while it has no connection (it keeps reconnecting). */
  status: 'up' | 'down';
}

export interface EventBus {
  /**
   * Hands `event` to every listener of every instance on the bus. Never rejects: an event that
   * cannot be sent (Redis down) is counted in `lost` and logged, because the stream processing
   * that publishes must go on (soldCount) whether or not anyone can be told.
   */
  publish(event: ChangeEvent): Promise<void>;
  /** Calls `listener` with every event from now on; the returned function stops that. */
  subscribe(listener: ChangeEventListener): () => void;
  health(): EventBusHealth;
  /** Events that publish() could not send. */
  readonly lost: number;
  /** Messages received that failed their checks (schema, size, signature, freshness): dropped. */
  readonly rejected: number;
  /** Those messages by reason (a bus that receives from outside the process). */
  readonly refusals?: RefusalCounter;
  /** Set by whoever keeps the metrics: called for each event received, with ms since it was published. */
  onDelivered: ((latencyMs: number) => void) | undefined;
  /** Closes connections; publish() afterwards counts as lost. */
  close(): Promise<void>;
}

/** Today's behaviour: the events never leave the process. */
export class InProcessEventBus implements EventBus {
  private readonly listeners = new Set<ChangeEventListener>();
  readonly lost = 0;
  readonly rejected = 0;
  onDelivered: ((latencyMs: number) => void) | undefined;

  publish(event: ChangeEvent): Promise<void> {
    this.onDelivered?.(0);
    for (const listener of this.listeners) listener(event);
    return Promise.resolve();
  }

  subscribe(listener: ChangeEventListener): () => void {
    // A wrapper, so that one function subscribed twice is two subscriptions.
    const own: ChangeEventListener = (event) => listener(event);
    this.listeners.add(own);
    return () => this.listeners.delete(own);
  }

  health(): EventBusHealth {
    return { kind: 'in-process', status: 'up' };
  }

  close(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}
