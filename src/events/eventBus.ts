/**
 * Where change events travel between the stream processing that finds them and the server
 * instances whose subscribers want them. Two implementations: in-process (one instance runs its
 * own stream consumer: the default, no infrastructure) and Redis pub/sub (N API instances fed by
 * standalone consumers or the Lambda handler; src/events/redisEventBus.ts).
 *
 * Events travel by topic (src/table/entities/topics.ts): an event is published on each of its
 * topics, and an instance hears a topic only while it `watch`es it (its clients listen to it):
 * on Redis each topic is a channel of its own, subscribed while watched, so an instance with no
 * listener for a topic receives none of its messages. In process every event is heard anyway.
 * Filtering per subscriber (the access rules) happens in the GraphQL layer, never here.
 */
import type { ChangeEvent } from './changeEvent.js';
import type { RefusalCounter } from './signedEnvelope.js';

/** Told of each event received, with the topics it was heard on (each a topic of the event). */
export type ChangeEventListener = (event: ChangeEvent, topics: readonly string[]) => void;

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
  /** Calls `listener` with every event heard from now on; the returned function stops that. */
  subscribe(listener: ChangeEventListener): () => void;
  /**
   * Hears `topic` from now on (once per topic: the caller counts its own listeners); the
   * returned function stops. `subscribed` is called each time the topic's subscription is in
   * place (again, after a reconnect).
   */
  watch(topic: string, handlers?: TopicHandlers): () => void;
  /**
   * The topic's recent events (its `last` newest only, when given), oldest first, as every
   * instance sees them (Redis: a bounded stream per topic); absent on a bus without a shared
   * history (in process). Rejects when the history cannot be read.
   */
  history?(topic: string, last?: number): Promise<ChangeEvent[]>;
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

export interface TopicHandlers {
  /** The topic's subscription is in place: everything published from now on is heard. */
  subscribed?(): void;
  /** The topic's subscription was lost: what is published meanwhile is not heard. */
  lost?(): void;
}

/** One instance: the events never leave the process. */
export class InProcessEventBus implements EventBus {
  private readonly listeners = new Set<ChangeEventListener>();
  readonly lost = 0;
  readonly rejected = 0;
  onDelivered: ((latencyMs: number) => void) | undefined;

  publish(event: ChangeEvent): Promise<void> {
    this.onDelivered?.(0);
    for (const listener of this.listeners) listener(event, event.topics);
    return Promise.resolve();
  }

  subscribe(listener: ChangeEventListener): () => void {
    // A wrapper, so that one function subscribed twice is two subscriptions.
    const own: ChangeEventListener = (event, topics) => listener(event, topics);
    this.listeners.add(own);
    return () => this.listeners.delete(own);
  }

  /** Every topic is heard in process, from the start. */
  watch(_topic: string, handlers?: TopicHandlers): () => void {
    handlers?.subscribed?.();
    return () => undefined;
  }

  health(): EventBusHealth {
    return { kind: 'in-process', status: 'up' };
  }

  close(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}
