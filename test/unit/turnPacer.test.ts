/**
 * The pacer that spreads a large fan-out over turns of the event loop: a turn admits its share
 * at once, the rest wait and go a share per later turn in the order they asked, and between two
 * shares the loop runs other work.
 */
import { describe, expect, it } from 'vitest';
import { createTurnPacer } from '../../src/events/turnPacer.js';

/** A pacer on hand-cranked turns: `turn()` runs what the pacer scheduled for later. */
function cranked(share: number) {
  const scheduled: (() => void)[] = [];
  const pacer = createTurnPacer({ share, later: (callback) => scheduled.push(callback) });
  return {
    pacer,
    /** Ends the turn under way: the pacer's later callbacks run, then the microtasks they released. */
    turn: async () => {
      for (const callback of scheduled.splice(0)) callback();
      await new Promise((resolve) => setTimeout(resolve, 0));
    },
  };
}

describe('the turn pacer', () => {
  it('admits a share per turn and lets the rest go a share per later turn, first asked first served', async () => {
    const { pacer, turn } = cranked(3);
    const ran: number[] = [];
    const units = Array.from({ length: 8 }, (_, i) => {
      const wait = pacer.pace();
      if (!wait) ran.push(i);
      return wait?.then(() => ran.push(i));
    });
    expect(ran).toEqual([0, 1, 2]);
    expect(units.filter(Boolean)).toHaveLength(5);
    // A newcomer asks while others wait: it waits behind them.
    const late = pacer.pace();
    expect(late).toBeInstanceOf(Promise);
    void late?.then(() => ran.push(8));
    await turn();
    expect(ran).toEqual([0, 1, 2, 3, 4, 5]);
    await turn();
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(pacer.deferred).toBe(6);
    // Nothing waits any more: the next turn admits at once again.
    await turn();
    expect(pacer.pace()).toBeUndefined();
  });

  it('refuses a share that is not a positive whole number', () => {
    for (const share of [0, -1, 1.5, Number.NaN]) expect(() => createTurnPacer({ share })).toThrow(RangeError);
  });

  it('lets the event loop run other work between two shares of a burst', async () => {
    const pacer = createTurnPacer({ share: 16 });
    const log: string[] = [];
    let ticking = true;
    const tick = () => {
      log.push('tick');
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await new Promise((resolve) => setImmediate(resolve));
    const units = Array.from({ length: 64 }, async (_, i) => {
      const wait = pacer.pace();
      if (wait) await wait;
      log.push(`unit ${i}`);
    });
    await Promise.all(units);
    ticking = false;
    const firstUnit = log.indexOf('unit 0');
    const lastUnit = log.indexOf('unit 63');
    // Every unit ran, in the order it asked, and other work ran between the first and the last.
    expect(log.filter((line) => line.startsWith('unit'))).toEqual(units.map((_, i) => `unit ${i}`));
    expect(log.slice(firstUnit, lastUnit).filter((line) => line === 'tick').length).toBeGreaterThanOrEqual(3);
  });
});
