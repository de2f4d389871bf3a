/**
 * Spreads a burst of per-subscriber work over turns of the event loop, so that one event heard
 * by thousands of subscriptions cannot hold the loop (and every other socket, timer and Redis
 * message of the process) until the last of them is served.
 *
 * Each unit of work asks `pace()` first. While the current turn has admitted fewer than its
 * share, the unit goes on at once (`pace()` returns undefined: no promise, no extra turn for the
 * common case of a few subscribers). Past it, the unit waits, in the order it asked, and the
 * waiting units are let go a share at a time, one share per `setImmediate`: between two shares
 * the loop reads sockets, runs timers and serves other requests.
 *
 * The share is measured, not guessed: a turn's units are timed together (from the first one
 * admitted to the `setImmediate` after it, which runs once their synchronous work and its
 * microtasks are done), and the share becomes what fits in `sliceMs` at the cost per unit seen
 * lately, between `minShare` and `maxShare`. A unit's own continuation runs after the check, so
 * the count, not the clock at the check, is what bounds a turn.
 *
 * The pacer decides only when a unit runs, never what it sees: a subscription's events are
 * still taken from its own queue one at a time and in order, so pacing can delay an event but
 * never reorder, repeat or drop one.
 */

export interface TurnPacerOptions {
  /** About how long one turn's paced work may take (ms). */
  sliceMs?: number | undefined;
  /** The fewest units let go per turn (progress under any load). */
  minShare?: number | undefined;
  /** The most units let go per turn, however cheap they look. */
  maxShare?: number | undefined;
  /** The clock (ms); tests pass their own. */
  now?: (() => number) | undefined;
  /** Runs `callback` in a later turn (setImmediate); tests pass their own. */
  later?: ((callback: () => void) => void) | undefined;
}

export interface TurnPacer {
  /** Undefined: go on now. A promise: wait for it, it resolves in a later turn, in call order. */
  pace(): Promise<void> | undefined;
  /** Units that had to wait for a later turn, so far. */
  readonly deferred: number;
  /** How many units a turn admits now. */
  readonly share: number;
}

/** What one turn's paced work may take: a few tens of ms of stall at most, with a unit's overshoot. */
export const DEFAULT_SLICE_MS = 10;
export const DEFAULT_MIN_SHARE = 8;
export const DEFAULT_MAX_SHARE = 128;
/** The cost per unit assumed before any is measured (ms): a settled answer and a socket write. */
const INITIAL_UNIT_MS = 0.25;
/** How much the latest turn moves the measured cost per unit. */
const SMOOTHING = 0.3;

export function createTurnPacer({
  sliceMs = DEFAULT_SLICE_MS,
  minShare = DEFAULT_MIN_SHARE,
  maxShare = DEFAULT_MAX_SHARE,
  now = () => performance.now(),
  later = (callback) => void setImmediate(callback),
}: TurnPacerOptions = {}): TurnPacer {
  const waiting: (() => void)[] = [];
  let unitMs = INITIAL_UNIT_MS;
  let share = clampShare(sliceMs / unitMs);
  /** Units admitted in the turn under way, and when its first one was. */
  let admitted = 0;
  let turnStart = 0;
  let turnOpen = false;
  let deferred = 0;

  function clampShare(fits: number): number {
    return Math.max(minShare, Math.min(maxShare, Math.floor(fits)));
  }

  function openTurn(): void {
    turnOpen = true;
    admitted = 0;
    turnStart = now();
    later(closeTurn);
  }

  /** After a turn's units ran: learns their cost, then lets the next share of waiting units go. */
  function closeTurn(): void {
    if (admitted > 0) {
      const perUnit = (now() - turnStart) / admitted;
      unitMs += SMOOTHING * (perUnit - unitMs);
      share = clampShare(sliceMs / Math.max(unitMs, 1e-3));
    }
    turnOpen = false;
    admitted = 0;
    if (waiting.length === 0) return;
    openTurn();
    for (const release of waiting.splice(0, share)) {
      admitted++;
      release();
    }
  }

  return {
    pace() {
      // Behind units already waiting, a newcomer waits too: first asked, first served.
      if (waiting.length === 0 && (!turnOpen || admitted < share)) {
        if (!turnOpen) openTurn();
        admitted++;
        return undefined;
      }
      deferred++;
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    get deferred() {
      return deferred;
    },
    get share() {
      return share;
    },
  };
}
