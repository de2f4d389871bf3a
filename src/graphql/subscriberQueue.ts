/**
 * One subscription's events as an async iterator: what arrives while nobody awaits waits in a
 * bounded queue (a client that reads slower than events arrive loses the oldest ones rather than
 * growing the server's memory). Its `return()` stops at once, also while a `next()` is waiting
 * for an event (that `next()` then resolves as done): an async generator could only run its
 * cleanup after the next event arrived, so every abandoned subscription would stay registered
 * until then.
 */
import type { ChangeEvent } from '../events/changeEvent.js';

export interface SubscriberQueue<E extends ChangeEvent> {
  /** Hand it each event of its topic; those `accept` refuses are left out. */
  readonly listener: (event: ChangeEvent) => void;
  readonly iterator: AsyncIterableIterator<E>;
  /**
   * Puts `events` (read from a history) before what arrived live meanwhile, leaving out the live
   * ones among them: each of those was either read or comes after.
   */
  prepend(events: ChangeEvent[]): void;
  /** Ends the iterator with `error`, after the events already queued: the listener is removed at once. */
  readonly fail: (error: Error) => void;
}

export function subscriberQueue<E extends ChangeEvent>({
  held,
  accept,
  maxPending,
  stop,
}: {
  /** Events to deliver first. */
  held: ChangeEvent[];
  accept: ((event: ChangeEvent) => boolean) | undefined;
  maxPending: number;
  /** Called once when the iterator ends. */
  stop: () => void;
}): SubscriberQueue<E> {
  const pending = [...held];
  let waiting: ((result: IteratorResult<E>) => void) | undefined;
  let done = false;
  let failure: Error | undefined;
  const listener = (event: ChangeEvent) => {
    if (accept && !accept(event)) return;
    if (waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve({ value: event as E, done: false });
      return;
    }
    pending.push(event);
    if (pending.length > maxPending) pending.shift();
  };
  const finish = (): Promise<IteratorResult<E>> => {
    if (!done) {
      done = true;
      stop();
      pending.length = 0;
      waiting?.({ value: undefined, done: true });
      waiting = undefined;
    }
    return Promise.resolve({ value: undefined, done: true });
  };
  const iterator: AsyncIterableIterator<E> = {
    next: () => {
      const event = pending.shift();
      if (event) return Promise.resolve({ value: event as E, done: false });
      if (failure) {
        const error = failure;
        failure = undefined;
        return Promise.reject(error);
      }
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
  return {
    listener,
    iterator,
    fail: (error) => {
      if (done) return;
      done = true;
      stop();
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        // A waiting next() is told now; it could only wait on an empty queue.
        resolve(Promise.reject(error) as never);
        return;
      }
      failure = error;
    },
    prepend: (events) => {
      if (done || events.length === 0) return;
      const read = new Set(events.map((event) => event.seq));
      const live = pending.filter((event) => !read.has(event.seq));
      pending.length = 0;
      pending.push(...[...events, ...live].slice(-maxPending));
    },
  };
}
