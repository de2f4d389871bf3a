/**
 * What a topic's history says about a gap: the events after the last one a listener received,
 * each once and in the order they were published, or `undefined` when the history does not
 * prove the gap (that event trimmed, expired or lost with Redis). One rule for the two places a
 * gap is closed from the history: a stream resuming with `Last-Event-ID` (EventFanOut.open) and
 * an open subscription whose Redis subscription was lost and is back (EventFanOut's catch-up).
 */
import type { ChangeEvent } from '../events/changeEvent.js';

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
