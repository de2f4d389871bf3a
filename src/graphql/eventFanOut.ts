/**
 * Fan-out of change events to the GraphQL subscriptions of this instance. The events come from
 * the table's stream through an event bus (src/events/): in-process when this instance runs its
 * own stream consumer, Redis when standalone consumers or the Lambda feed many instances. Either
 * way every instance sees every change, whoever wrote it; this module listens to the bus once
 * and hands each event to the subscriptions connected here that listen to one of its topics
 * (src/table/entities/topics.ts): a subscription names one topic, and an event reaches the
 * subscriptions of its topics only, whatever the kind of item that changed.
 *
 * Each change reaches a subscriber once: an event whose `seq` (the stream record's sequence
 * number) was delivered here already, within the last `dedupeWindow` events, is dropped. A
 * change is published again after a consumer fail-over, a checkpoint replay, or by both the
 * Lambda and a consumer; the repeat never reaches the subscribers.
 */
import { InProcessEventBus } from '../events/eventBus.js';
import type { EventBus } from '../events/eventBus.js';
import type { ChangeEvent, ChangeEventOf, EventEntity } from '../events/changeEvent.js';
import { SeenWindow } from '../events/seenWindow.js';
import { DEFAULT_EVENT_DEDUPE_WINDOW, DEFAULT_SSE_REPLAY_EVENTS } from '../config/index.js';

/**
 * Events a subscriber has not taken yet. A client that reads slower than events arrive loses
 * the oldest ones rather than growing the server's memory without bound.
 */
export const MAX_PENDING_EVENTS = 100;

/** Stream sequence numbers are decimal strings of up to 40 digits: compared as numbers. */
export const SEQ_PATTERN = /^\d{1,40}$/;
export const compareSeq = (a: string, b: string): number => {
  const difference = BigInt(a) - BigInt(b);
  return difference > 0n ? 1 : difference < 0n ? -1 : 0;
};

/** What a subscription listens to. */
export interface Listening<E extends ChangeEvent = ChangeEvent> {
  /** The one topic it hears (TOPICS in src/table/entities/topics.ts). */
  topic: string;
  /** Of the topic's events, those it wants (default all): a type, say. */
  accept?: ((event: ChangeEvent) => event is E) | ((event: ChangeEvent) => boolean) | undefined;
  /** A resumed subscription (SSE Last-Event-ID): the held events after this sequence number first. */
  resumeAfter?: string | undefined;
}

type Listener = (event: ChangeEvent) => void;

/** A test that an event is about a node of `entity` (a subscription's `accept`), typed as such. */
export const eventsAbout =
  <N extends EventEntity>(entity: N) =>
  (event: ChangeEvent): event is ChangeEventOf<N> =>
    event.entity === entity;

export class EventFanOut {
  readonly bus: EventBus;
  private readonly unsubscribe: () => void;
  private readonly seen: SeenWindow;
  private duplicateCount = 0;
  /** The latest events, oldest first: what a resumed stream replays. */
  private readonly recent: ChangeEvent[] = [];
  /** The listeners of each topic heard here. */
  private readonly byTopic = new Map<string, Set<Listener>>();
  private listenerCount = 0;

  /**
   * `replayEvents`: how many recent events a resuming stream can catch up on (SSE_REPLAY_EVENTS);
   * `dedupeWindow`: how many recent `seq` are remembered to drop repeats (EVENT_DEDUPE_WINDOW).
   */
  constructor(
    bus: EventBus = new InProcessEventBus(),
    private readonly replayEvents = DEFAULT_SSE_REPLAY_EVENTS,
    dedupeWindow = DEFAULT_EVENT_DEDUPE_WINDOW,
  ) {
    this.bus = bus;
    this.seen = new SeenWindow(dedupeWindow);
    this.unsubscribe = bus.subscribe((event) => {
      if (SEQ_PATTERN.test(event.seq)) {
        if (!this.seen.firstTime(event.seq)) {
          this.duplicateCount++;
          return;
        }
        this.recent.push(event);
        if (this.recent.length > this.replayEvents) this.recent.shift();
      }
      for (const topic of event.topics) {
        const listeners = this.byTopic.get(topic);
        // A copy: a listener may end its subscription (and another's) while it runs.
        if (listeners) for (const listener of [...listeners]) listener(event);
      }
    });
  }

  /** Repeats of an already delivered event dropped so far. */
  get duplicates(): number {
    return this.duplicateCount;
  }

  /**
   * Whether every event after `seq` is still held: true when `seq` is not older than the
   * oldest event kept (everything after it was kept since). Otherwise some may be lost (evicted,
   * or published before this instance listened), and a resuming client must refetch.
   */
  covers(seq: string): boolean {
    const oldest = this.recent[0];
    return oldest?.seq !== undefined && compareSeq(seq, oldest.seq) >= 0;
  }

  /** Sends `event` over the bus (to every instance on it, this one included). */
  publish(event: ChangeEvent): Promise<void> {
    return this.bus.publish(event);
  }

  /**
   * The events of `topic` that `accept` lets through, as an async iterator. Its `return()`
   * removes the listener at once, also while a `next()` is waiting for an event (that `next()`
   * then resolves as done): an async generator could only run its cleanup after the next event
   * arrived, so every abandoned subscription would stay registered until then.
   */
  subscribe<E extends ChangeEvent = ChangeEvent>({
    topic,
    accept,
    resumeAfter,
  }: Listening<E>): AsyncIterableIterator<E> {
    const wanted = (event: ChangeEvent): boolean => event.topics.includes(topic) && (accept?.(event) ?? true);
    // The held events after `resumeAfter` first, then live ones: taken in the same tick as the
    // listener is added, so none is missed or delivered twice in between.
    const pending: ChangeEvent[] =
      resumeAfter === undefined
        ? []
        : this.recent
            .filter((event) => compareSeq(event.seq, resumeAfter) > 0 && wanted(event))
            .slice(-MAX_PENDING_EVENTS);
    let waiting: ((result: IteratorResult<E>) => void) | undefined;
    let done = false;
    const listener: Listener = (event) => {
      if (accept && !accept(event)) return;
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ value: event as E, done: false });
        return;
      }
      pending.push(event);
      if (pending.length > MAX_PENDING_EVENTS) pending.shift();
    };
    const finish = (): Promise<IteratorResult<E>> => {
      if (!done) {
        done = true;
        this.removeListener(topic, listener);
        pending.length = 0;
        waiting?.({ value: undefined, done: true });
        waiting = undefined;
      }
      return Promise.resolve({ value: undefined, done: true });
    };
    this.addListener(topic, listener);
    return {
      next: () => {
        const event = pending.shift();
        if (event) return Promise.resolve({ value: event as E, done: false });
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

  /** This instance's subscriptions listening now. */
  get subscriberCount(): number {
    return this.listenerCount;
  }

  /** The topics at least one subscription here listens to (what a router would subscribe this instance to). */
  get topics(): string[] {
    return [...this.byTopic.keys()];
  }

  /** Stops listening to the bus (the bus itself belongs to whoever made it). */
  detach(): void {
    this.unsubscribe();
  }

  private addListener(topic: string, listener: Listener): void {
    let listeners = this.byTopic.get(topic);
    if (!listeners) this.byTopic.set(topic, (listeners = new Set()));
    listeners.add(listener);
    this.listenerCount++;
  }

  private removeListener(topic: string, listener: Listener): void {
    const listeners = this.byTopic.get(topic);
    if (!listeners?.delete(listener)) return;
    this.listenerCount--;
    if (listeners.size === 0) this.byTopic.delete(topic);
  }
}
