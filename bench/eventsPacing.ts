/**
 * How `npm run bench:events` places its orders (eventsSoak.ts), and what DynamoDB Local alone
 * can take of them.
 *
 * The fan-out target is about delivering events, but DynamoDB Local runs transactions one at a
 * time: a writer that places orders as fast as they are answered (closed loop, ten in flight)
 * keeps that queue full, and the stream reader's own transactions (a page's soldCount, its
 * checkpoint) wait in it behind the orders. So the bench places orders open loop, at a rate
 * (`--order-rate`), and measures first what DynamoDB Local sustains of placeOrder's own work
 * with nothing else running, which the default rate is a fraction of.
 */
import { randomUUID } from 'node:crypto';
import type { Dynamo } from '../src/db/client.js';
import { CursorCodec } from '../src/db/cursor.js';
import { seededRandom } from '../src/seed/seededRandom.js';
import { placeOrder } from '../src/writes/placeOrder.js';
import { spread, wallNow } from './eventStages.js';

/** One round of orders: closed loop (`max`, `inFlight` at a time as they answer) or open loop at `perSecond`. */
export type OrderPace = { kind: 'max'; inFlight: number } | { kind: 'rate'; perSecond: number };

/** The share of DynamoDB Local's measured capacity that `auto` places orders at (see docs/decisions/event-bench-pacing.md). */
export const AUTO_SHARE = 0.5;

/** The in-flight count of the closed loop (`max`): what the bench always did. */
export const MAX_IN_FLIGHT = 10;

/** Parses `--order-rate`: a comma-separated list of rates per second, `auto` and `max`. */
export function parseRates(text: string): ('auto' | OrderPace)[] {
  return text.split(',').map((part) => {
    const value = part.trim();
    if (value === 'auto') return 'auto';
    if (value === 'max') return { kind: 'max', inFlight: MAX_IN_FLIGHT };
    const perSecond = Number(value);
    if (!Number.isFinite(perSecond) || perSecond <= 0)
      throw new Error(`--order-rate: "${value}" is neither a positive number of orders per second, auto nor max`);
    return { kind: 'rate', perSecond };
  });
}

export const paceName = (pace: OrderPace): string =>
  pace.kind === 'max' ? `max (closed loop, ${pace.inFlight} in flight)` : `${pace.perSecond}/s`;

/**
 * When each of `count` orders is sent, in ms from the start: `even` spaces them 1/rate apart,
 * `poisson` draws exponential gaps of mean 1/rate (independent customers), seeded.
 */
export function arrivalTimes(count: number, perSecond: number, arrivals: 'even' | 'poisson', seed = 1): number[] {
  const gapMs = 1000 / perSecond;
  const random = seededRandom(seed);
  const times: number[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    times.push(at);
    at += arrivals === 'even' ? gapMs : -Math.log(1 - random()) * gapMs;
  }
  return times;
}

/** What a round of placement did. */
export interface PlacementReport {
  /** Orders answered per second, first send to last answer. */
  achievedPerSecond: number;
  /** Orders sent per second, first send to last send (open loop: what the schedule asked for). */
  sentPerSecond: number;
  maxInFlight: number;
  /** placeOrder's round trips through the API (ms). */
  answerMs: number[];
  /** How late each send was against its schedule (ms; the bench's own timer, open loop only). */
  lateMs: number[];
}

/**
 * Places one order per id, paced by `pace` (`arrivals` for open loop); `place` resolves at the
 * order's answer. Resolves once every order is answered.
 */
export async function placeOrders(
  ids: readonly string[],
  pace: OrderPace,
  arrivals: 'even' | 'poisson',
  place: (id: string) => Promise<void>,
): Promise<PlacementReport> {
  const answerMs: number[] = [];
  const lateMs: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let lastSent = 0;
  const start = wallNow();
  const one = async (id: string) => {
    const sent = wallNow();
    lastSent = sent;
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    await place(id);
    inFlight--;
    answerMs.push(wallNow() - sent);
  };
  if (pace.kind === 'max') {
    for (let i = 0; i < ids.length; i += pace.inFlight) await Promise.all(ids.slice(i, i + pace.inFlight).map(one));
  } else {
    const schedule = arrivalTimes(ids.length, pace.perSecond, arrivals);
    const pending: Promise<void>[] = [];
    for (const [i, id] of ids.entries()) {
      const wait = start + schedule[i]! - wallNow();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      lateMs.push(Math.max(0, wallNow() - (start + schedule[i]!)));
      pending.push(one(id));
    }
    await Promise.all(pending);
  }
  const end = wallNow();
  return {
    achievedPerSecond: (ids.length / (end - start)) * 1000,
    sentPerSecond: ids.length > 1 ? ((ids.length - 1) / (lastSent - start)) * 1000 : NaN,
    maxInFlight,
    answerMs,
    lateMs,
  };
}

export const placementLine = (report: PlacementReport): string =>
  `orders answered ${report.achievedPerSecond.toFixed(1)}/s (sent ${report.sentPerSecond.toFixed(1)}/s, at most ${report.maxInFlight} in flight); placeOrder round trip ${spread(report.answerMs)}${report.lateMs.length > 0 ? `; sends late against the schedule ${spread(report.lateMs)}` : ''}`;

/** DynamoDB Local's capacity for placeOrder's own work, measured with nothing else running. */
export interface Capacity {
  /** Orders per second with one in flight (1 / its service time). */
  alonePerSecond: number;
  /** Orders per second with `MAX_IN_FLIGHT` in flight: what DynamoDB Local sustains at most. */
  saturatedPerSecond: number;
  aloneMs: number[];
  saturatedMs: number[];
}

/**
 * placeOrder's DynamoDB work (its consistent BatchGetItem and its TransactWriteItems) called
 * in process on DynamoDB Local, first one at a time, then `MAX_IN_FLIGHT` at a time, after a
 * round to warm its JVM up: no API, no stream reader, nothing else of the bench. Each of the
 * `MAX_IN_FLIGHT` workers orders for a customer and a product of its own (`customers[i]`), so
 * the transactions never conflict (a conflict is retried, and would be measured as queueing).
 */
export async function measureCapacity(
  dynamo: Dynamo,
  tableName: string,
  customers: readonly { userId: string; productId: string }[],
  count = 24,
): Promise<Capacity> {
  const data = { dynamo, tableName, cursors: new CursorCodec('bench-capacity') };
  const timed = async (worker: number): Promise<number> => {
    const { userId, productId } = customers[worker % customers.length]!;
    const started = performance.now();
    const result = await placeOrder(data, {
      userId,
      idempotencyKey: randomUUID(),
      items: [{ productId, quantity: 1 }],
    });
    if (!result.ok) throw new Error(`capacity probe: placeOrder refused: ${JSON.stringify(result.userErrors)}`);
    return performance.now() - started;
  };
  /** `total` orders, `workers` in flight: their round trips and the orders per second. */
  const run = async (workers: number, total: number) => {
    const times: number[] = [];
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: workers }, async (_, worker) => {
        while (next++ < total) times.push(await timed(worker));
      }),
    );
    return { times, perSecond: (total / (performance.now() - started)) * 1000 };
  };
  await run(MAX_IN_FLIGHT, count / 2);
  const alone = await run(1, count);
  const saturated = await run(MAX_IN_FLIGHT, count * 2);
  return {
    alonePerSecond: alone.perSecond,
    saturatedPerSecond: saturated.perSecond,
    aloneMs: alone.times,
    saturatedMs: saturated.times,
  };
}
