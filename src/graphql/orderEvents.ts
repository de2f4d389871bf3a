/**
 * Fan-out of order events to the GraphQL subscriptions of this instance. The events come from
 * the table's stream through an event bus (src/events/): in-process when this instance runs its
 * own stream consumer, Redis when standalone consumers or the Lambda feed many instances. Either
 * way every instance sees every change, whoever wrote it; this module listens to the bus once
 * and hands each event to the subscribers connected here that `accept` it.
 *
 * Each change reaches a subscriber once: an event whose `seq` (the stream record's sequence
 * number) was delivered here already, within the last `dedupeWindow` events, is dropped. A
 * change is published again after a consumer fail-over, a checkpoint replay, or by both the
 * Lambda and a consumer; the repeat never reaches the subscribers.
 */
import { EventEmitter } from 'node:events';
import { InProcessEventBus } from '../events/eventBus.js';
import type { EventBus } from '../events/eventBus.js';
import type { OrderEventModel } from '../events/orderEvent.js';
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

export class OrderEvents {
  private readonly emitter = new EventEmitter();
  readonly bus: EventBus;
  private readonly unsubscribe: () => void;
  private readonly seen: SeenWindow;
  private duplicateCount = 0;
  /** The latest events, oldest first: what a resumed stream replays. */
  private readonly recent: OrderEventModel[] = [];

  /**
   * `replayEvents`: how many recent events a resuming stream can catch up on (SSE_REPLAY_EVENTS);
   * `dedupeWindow`: how many recent `seq` are remembered to drop repeats (EVENT_DEDUPE_WINDOW).
   */
  constructor(
    bus: EventBus = new InProcessEventBus(),
    private readonly replayEvents = DEFAULT_SSE_REPLAY_EVENTS,
    dedupeWindow = DEFAULT_EVENT_DEDUPE_WINDOW,
  ) {
    // Each subscription adds a listener; thousands of subscribers are fine.
    this.emitter.setMaxListeners(0);
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
      this.emitter.emit('event', event);
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
  publish(event: OrderEventModel): Promise<void> {
    return this.bus.publish(event);
  }

  /**
   * The events that `accept` lets through, as an async iterator. Its `return()` removes the
   * listener at once, also while a `next()` is waiting for an event (that `next()` then
   * resolves as done): an async generator could only run its cleanup after the next event
   * arrived, so every abandoned subscription would stay registered until then.
   */
  subscribe(accept: (event: OrderEventModel) => boolean, resumeAfter?: string): AsyncIterableIterator<OrderEventModel> {
    // The held events after `resumeAfter` first, then live ones: taken in the same tick as the
    // listener is added, so none is missed or delivered twice in between.
    const pending: OrderEventModel[] =
      resumeAfter === undefined
        ? []
        : this.recent
            .filter((event) => compareSeq(event.seq, resumeAfter) > 0 && accept(event))
            .slice(-MAX_PENDING_EVENTS);
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

  /** Stops listening to the bus (the bus itself belongs to whoever made it). */
  detach(): void {
    this.unsubscribe();
  }
}
