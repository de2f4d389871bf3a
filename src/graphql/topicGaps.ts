/**
 * Gaps in what a topic's listeners receive, closed from the topic's history. A subscription on
 * Redis can be lost (the server restarted, a primary killed, a fail-over); its listeners then
 * wait while the events heard since are held, and once the subscription is back the history is
 * read from the last event they received: what they missed is delivered first, in order and
 * once, then what was held. When the history does not prove the gap, cannot be read, or the
 * subscription is not back within CATCH_UP_BOUND_MS, each of them is ended with EVENTS_MISSED.
 *
 * What a topic's history says about a gap: the events after the last one a listener received,
 * each once and in the order they were published, or `undefined` when the history does not
 * prove the gap (that event trimmed, expired or lost with Redis). One rule for the two places a
 * gap is closed from the history: a stream resuming with `Last-Event-ID` (EventFanOut.open) and
 * an open subscription whose Redis subscription was lost and is back (EventFanOut's catch-up).
 */
import type { ChangeEvent } from '../events/changeEvent.js';
import { EventsMissedError } from '../errors.js';

/**
 * How long after a lost subscription its listeners may wait for the catch-up: past it (Redis
 * still away, or the history not read in time) each listener's stream ends with EVENTS_MISSED.
 * Under the 5 s a client is promised, with room for the end to reach it.
 */
export const CATCH_UP_BOUND_MS = 4000;

/** Live events held for the listeners being caught up, at most; one more ends them with EVENTS_MISSED. */
export const CATCH_UP_HELD_EVENTS = 1000;

/**
 * Where a listener stood on its topic: the `seq` of the last event it received, `null` when the
 * topic had no event at all when its subscription was placed, `undefined` when that is unknown.
 */
export type Position = string | null | undefined;

/** The events of `history` (oldest first) after `position`, each `seq` once; undefined when not proven. */
export function eventsAfter(history: readonly ChangeEvent[], position: Position): ChangeEvent[] | undefined {
  let from: number;
  if (position === null) from = 0;
  else if (position === undefined) {
    // Nothing known of where it stood: only an empty history proves that nothing was missed.
    if (history.length > 0) return undefined;
    from = 0;
  } else {
    const at = history.findLastIndex((event) => event.seq === position);
    if (at < 0) return undefined;
    from = at + 1;
  }
  const held = new Set(history.slice(0, from).map((event) => event.seq));
  return history.slice(from).filter((event) => {
    if (held.has(event.seq)) return false;
    held.add(event.seq);
    return true;
  });
}

/** One subscription as the fan-out sees it: handed events, or ended with an error. */
export interface Listener {
  deliver(event: ChangeEvent): void;
  fail(error: Error): void;
}

/** A topic whose subscription was lost: its listeners then, where they stood, what is heard since. */
interface Gap {
  listeners: Set<Listener>;
  after: Position;
  heard: ChangeEvent[];
  timer: NodeJS.Timeout;
  reading: boolean;
}

export interface TopicGapsOptions {
  /** Reads a topic's history (its `last` newest only); absent: no history, no catch-up (in process nothing is lost). */
  history: ((topic: string, last?: number) => Promise<ChangeEvent[]>) | undefined;
  /** Whether a subscription here listens to `topic`. */
  listening(topic: string): boolean;
  /** Whether `topic`'s subscription is in place now. */
  subscribed(topic: string): boolean;
  /** Told of each event delivered from a history (so that a repeat heard later is dropped). */
  delivered(topic: string, seq: string): void;
}

export class TopicGaps {
  /** Where each topic listened to stands: the last event heard on it. */
  private readonly position = new Map<string, Position>();
  private readonly gaps = new Map<string, Gap>();

  constructor(private readonly options: TopicGapsOptions) {}

  /** `event` was heard on `topic`: it is where the topic stands, and held for a gap's listeners. */
  heard(topic: string, event: ChangeEvent, known: boolean): void {
    if (known) this.position.set(topic, event.seq);
    const gap = this.gaps.get(topic);
    if (!gap) return;
    gap.heard.push(event);
    if (gap.heard.length > CATCH_UP_HELD_EVENTS) this.end(topic, gap);
  }

  /** Whether `listener` waits to be caught up on `topic` (it is not handed live events meanwhile). */
  holds(topic: string, listener: Listener): boolean {
    return this.gaps.get(topic)?.listeners.has(listener) ?? false;
  }

  /** `topic`'s subscription is in place (again): catches its gap up, or learns where it stands. */
  subscribed(topic: string): void {
    const gap = this.gaps.get(topic);
    if (gap) {
      void this.catchUp(topic, gap);
      return;
    }
    const { history } = this.options;
    if (this.position.has(topic) || !history) return;
    // Where the topic stands as its listening starts, for a catch-up after a loss before any
    // event is heard: the newest entry of its history (a live event heard meanwhile is newer).
    history(topic, 1).then(
      ([newest]) => {
        if (this.options.listening(topic) && !this.position.has(topic)) this.position.set(topic, newest?.seq ?? null);
      },
      () => undefined,
    );
  }

  /** `topic`'s subscription was lost: `listeners` wait to be caught up (at most CATCH_UP_BOUND_MS). */
  lost(topic: string, listeners: ReadonlySet<Listener>): void {
    if (this.gaps.has(topic) || !this.options.history) return;
    const gap: Gap = {
      listeners: new Set(listeners),
      after: this.position.get(topic),
      heard: [],
      timer: setTimeout(() => this.end(topic, gap), CATCH_UP_BOUND_MS),
      reading: false,
    };
    gap.timer.unref();
    this.gaps.set(topic, gap);
  }

  /** `listener` stopped listening to `topic`. */
  leave(topic: string, listener: Listener): void {
    const gap = this.gaps.get(topic);
    if (!gap?.listeners.delete(listener) || gap.listeners.size > 0) return;
    clearTimeout(gap.timer);
    this.gaps.delete(topic);
  }

  /** Nothing listens to `topic` any more. */
  forget(topic: string): void {
    this.position.delete(topic);
  }

  private async catchUp(topic: string, gap: Gap): Promise<void> {
    const { history } = this.options;
    if (gap.reading || !history) return;
    gap.reading = true;
    let read: ChangeEvent[];
    try {
      read = await history(topic);
    } catch {
      if (this.gaps.get(topic) === gap) this.end(topic, gap);
      return;
    }
    gap.reading = false;
    if (this.gaps.get(topic) !== gap) return;
    // Lost again while reading: what is published now may be in neither; the next subscription reads again.
    if (!this.options.subscribed(topic)) return;
    const missed = eventsAfter(read, gap.after);
    if (!missed) return this.end(topic, gap);
    clearTimeout(gap.timer);
    this.gaps.delete(topic);
    const seqs = new Set(missed.map((event) => event.seq));
    for (const event of missed) this.options.delivered(topic, event.seq);
    const last = missed.at(-1);
    if (gap.heard.length === 0 && last) this.position.set(topic, last.seq);
    for (const event of [...missed, ...gap.heard.filter((heard) => !seqs.has(heard.seq))])
      for (const listener of [...gap.listeners]) listener.deliver(event);
  }

  /** The gap cannot be closed: each of its listeners is ended with EVENTS_MISSED. */
  private end(topic: string, gap: Gap): void {
    clearTimeout(gap.timer);
    if (this.gaps.get(topic) === gap) this.gaps.delete(topic);
    for (const listener of [...gap.listeners]) listener.fail(new EventsMissedError());
  }
}
