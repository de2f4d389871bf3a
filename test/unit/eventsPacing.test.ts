import { describe, expect, it } from 'vitest';
import { arrivalTimes, parseRates, placeOrders } from '../../bench/eventsPacing.js';

describe("bench:events' order pacing", () => {
  it('parses a list of rates, auto and max, and refuses anything else', () => {
    expect(parseRates('max, 12.5,auto')).toEqual([
      { kind: 'max', inFlight: 10 },
      { kind: 'rate', perSecond: 12.5 },
      'auto',
    ]);
    for (const bad of ['0', '-3', 'fast', '', '10,,20']) expect(() => parseRates(bad), bad).toThrow(/--order-rate/);
  });

  it('spaces even arrivals 1/rate apart', () => {
    expect(arrivalTimes(4, 20, 'even')).toEqual([0, 50, 100, 150]);
  });

  it('draws seeded Poisson arrivals: the same every run, at the rate asked on average, not evenly spaced', () => {
    const times = arrivalTimes(2000, 20, 'poisson');
    expect(arrivalTimes(2000, 20, 'poisson')).toEqual(times);
    expect(arrivalTimes(2000, 20, 'poisson', 2)).not.toEqual(times);
    const gaps = times.slice(1).map((at, i) => at - times[i]!);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(45);
    expect(mean).toBeLessThan(55);
    // Exponential gaps: about 63% of them shorter than the mean, some several times longer.
    const shorter = gaps.filter((gap) => gap < 50).length / gaps.length;
    expect(shorter).toBeGreaterThan(0.58);
    expect(shorter).toBeLessThan(0.68);
    expect(Math.max(...gaps)).toBeGreaterThan(200);
  });

  it('places open loop on schedule whatever the answers take, and closed loop at most `inFlight` at a time', async () => {
    const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 60));
    const open = await placeOrders(['a', 'b', 'c', 'd', 'e', 'f'], { kind: 'rate', perSecond: 100 }, 'even', slow);
    // Sent every 10 ms while each answer takes 60: several are in flight at once.
    expect(open.maxInFlight).toBeGreaterThan(3);
    expect(open.answerMs).toHaveLength(6);
    const closed = await placeOrders(['a', 'b', 'c', 'd', 'e'], { kind: 'max', inFlight: 2 }, 'even', slow);
    expect(closed.maxInFlight).toBe(2);
    expect(closed.lateMs).toEqual([]);
    // Three waves of 60 ms: no faster than 5 orders in 180 ms, less the 1 ms early that each
    // wave's timer may fire (Node rounds a timer's start to the millisecond).
    expect(closed.achievedPerSecond).toBeLessThan(5 / 0.177);
  });
});
