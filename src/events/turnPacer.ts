/**
 * Spreads a burst of per-subscriber work over turns of the event loop, so that one event heard
 * by thousands of subscriptions cannot hold the loop (and every other socket, timer and Redis
 * message of the process) until the last of them is served.
 *
 * Each unit of work asks `pace()` first. While the current turn has admitted fewer than `share`
 * units, the unit goes on at once (`pace()` returns undefined: no promise, no extra turn for
 * the common case of a few subscribers). Past it, the unit waits, in the order it asked, and the
 * waiting units are let go `share` at a time, one share per `setImmediate`: between two shares
 * the loop reads sockets, runs timers and serves other requests.
 *
 * The share is a count, not a time: a unit's work (its execution, answer and write) runs in
 * microtasks after its check, so a clock read at the check sees none of it; and a turn's length
 * measured from outside includes whatever else ran in it (other callbacks, the machine's other
 * processes), which shrank a measured share to a trickle behind unrelated work on a busy
 * machine. A unit of the fan-out costs a few tens of microseconds here (a settled answer, a log
 * line and a socket write), so a share is a few milliseconds of work.
 *
 * The pacer decides only when a unit runs, never what it sees: a subscription's events are
 * still taken from its own queue one at a time and in order, so pacing can delay an event but
 * never reorder, repeat or drop one.
 */

export interface TurnPacerOptions {
  /** Units admitted per turn of the event loop (default DEFAULT_SHARE). */
  share?: number | undefined;
  /** Runs `callback` in a later turn (setImmediate); tests pass their own. */
  later?: ((callback: () => void) => void) | undefined;
}

export interface TurnPacer {
  /** Undefined: go on now. A promise: wait for it, it resolves in a later turn, in call order. */
  pace(): Promise<void> | undefined;
  /** Units that had to wait for a later turn, so far. */
  readonly deferred: number;
}

/** Units per turn: a few milliseconds of fan-out work, a few tens on a loaded machine. */
export const DEFAULT_SHARE = 128;

export function createTurnPacer({
  share = DEFAULT_SHARE,
  later = (callback) => void setImmediate(callback),
}: TurnPacerOptions = {}): TurnPacer {
  if (!Number.isInteger(share) || share < 1) throw new RangeError(`share must be a positive integer, not ${share}`);
  const waiting: (() => void)[] = [];
  /** Whether a turn is open (its close is scheduled), and the units it admitted. */
  let turnOpen = false;
  let admitted = 0;
  let deferred = 0;

  /** After a turn's units ran: lets the next share of waiting units go, in a turn of their own. */
  function closeTurn(): void {
    turnOpen = false;
    if (waiting.length === 0) return;
    openTurn();
    for (const release of waiting.splice(0, share)) {
      admitted++;
      release();
    }
  }

  function openTurn(): void {
    turnOpen = true;
    admitted = 0;
    later(closeTurn);
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
  };
}
