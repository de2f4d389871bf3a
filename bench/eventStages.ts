/**
 * Where a change event's time goes between a mutation's answer and a subscriber's receipt, for
 * `npm run bench:events` (eventsSoak.ts): the stream reader's account of each event (its debug
 * line `stream events published`: when the page holding the change arrived, when the event went
 * out), the API instances' histograms (publish → receipt, receipt → each subscriber's answer
 * ready for its socket) and the bench's own clock at both ends. Every process runs on this
 * machine, so their wall clocks agree to well under a millisecond.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ChildServer } from '../test/support/childServers.js';

/** Now on the wall clock, to the microsecond (performance.now() anchored at the process's start). */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/** The `p`th percentile of `sorted` (ascending), NaN when it is empty. */
export const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** p50 / p99 / max of `values` (ms), or "no data". */
export function spread(values: number[]): string {
  if (values.length === 0) return 'no data';
  const sorted = [...values].sort((a, b) => a - b);
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  return `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}, max ${ms(sorted.at(-1)!)} (n=${sorted.length})`;
}

/** A Prometheus histogram's cumulative bucket counts, summed over its label sets: upper bound → count. */
type Buckets = Map<number, number>;

/** /metrics of `server`, read again once when the read fails (a kept-alive connection reset on a loaded machine). */
const metricsText = (server: ChildServer): Promise<string> => {
  const read = async () => (await fetch(`${server.origin}/metrics`)).text();
  return read().catch(read);
};

async function bucketsOf(server: ChildServer, name: string): Promise<Buckets> {
  const text = await metricsText(server);
  const buckets: Buckets = new Map();
  const pattern = new RegExp(`^${name}_bucket\\{(?:[^}]*,)?le="([^"]+)"[^}]*\\} ([0-9.e+-]+)$`);
  for (const line of text.split('\n')) {
    const match = pattern.exec(line);
    if (!match) continue;
    const bound = match[1] === '+Inf' ? Infinity : Number(match[1]);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(match[2]));
  }
  return buckets;
}

/** Sums `name`'s buckets over `servers`. */
async function totalBuckets(servers: readonly ChildServer[], name: string): Promise<Buckets> {
  const total: Buckets = new Map();
  for (const buckets of await Promise.all(servers.map((server) => bucketsOf(server, name)))) {
    for (const [bound, count] of buckets) total.set(bound, (total.get(bound) ?? 0) + count);
  }
  return total;
}

/** The quantile `q` of what was observed between `before` and `after`, interpolated within its bucket (ms). */
function quantileMs(before: Buckets, after: Buckets, q: number): { value: number; count: number } {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((bound) => (after.get(bound) ?? 0) - (before.get(bound) ?? 0));
  const count = counts.at(-1) ?? 0;
  if (count === 0) return { value: NaN, count };
  const rank = q * count;
  for (const [i, bound] of bounds.entries()) {
    if ((counts[i] ?? 0) < rank) continue;
    const lower = i === 0 ? 0 : (bounds[i - 1] ?? 0);
    const below = i === 0 ? 0 : (counts[i - 1] ?? 0);
    const inBucket = (counts[i] ?? 0) - below;
    if (!Number.isFinite(bound)) return { value: lower * 1000, count };
    return { value: (lower + ((rank - below) / Math.max(1, inBucket)) * (bound - lower)) * 1000, count };
  }
  return { value: NaN, count };
}

/** A histogram of the API instances, read before and after a phase. */
export class InstanceHistogram {
  private before: Buckets = new Map();

  constructor(
    private readonly servers: readonly ChildServer[],
    private readonly name: string,
  ) {}

  async start(): Promise<void> {
    this.before = await totalBuckets(this.servers, this.name);
  }

  /** p50 / p99 of what was observed since start(), from the buckets (interpolated). */
  async spread(): Promise<string> {
    const after = await totalBuckets(this.servers, this.name);
    const p50 = quantileMs(this.before, after, 0.5);
    const p99 = quantileMs(this.before, after, 0.99);
    if (p50.count === 0) return 'no data';
    return `p50 ~${p50.value.toFixed(0)} ms, p99 ~${p99.value.toFixed(0)} ms (n=${p50.count}, from buckets)`;
  }
}

/** The stream reader's account of one event (its debug line `stream events published`). */
export interface ReaderTimes {
  readAt: number;
  /** Its page processed (soldCount written for every record of it). */
  processedAt: number;
  /** The lease found still current (a consumer on leases holds a page's events until then). */
  checkedAt: number | undefined;
  publishedAt: number;
  /** Its page's GetRecords round trip. */
  getRecordsMs: number | undefined;
  /** Its page read → the page before it done (0 when none was under way). */
  waitedMs: number;
  /** Its page's soldCount transactions, their round trips summed. */
  transactionMs: number;
}

/** What the reader's log says of each order's ORDER_PLACED event, by order id. */
export function readerTimesByOrder(logs: readonly Record<string, unknown>[]): Map<string, ReaderTimes> {
  const times = new Map<string, ReaderTimes>();
  for (const line of logs) {
    if (line.msg !== 'stream events published') continue;
    const readAt = line.readAt as number;
    const processedAt = line.processedAt as number;
    const checkedAt = line.checkedAt as number | undefined;
    const getRecordsMs = line.getRecordsMs as number | undefined;
    const waitedMs = ((line.beforeDoneAt as number | undefined) ?? readAt) - readAt;
    const transactionMs = ((line.transactions as { ms: number }[] | undefined) ?? []).reduce((sum, t) => sum + t.ms, 0);
    for (const event of line.published as { type: string; topic?: string; at?: number }[]) {
      const orderId = event.type === 'ORDER_PLACED' ? event.topic?.replace(/^order:/, '') : undefined;
      if (orderId && event.at !== undefined && !times.has(orderId))
        times.set(orderId, {
          readAt,
          processedAt,
          checkedAt,
          publishedAt: event.at,
          getRecordsMs,
          waitedMs,
          transactionMs,
        });
    }
  }
  return times;
}

/** How late this process's event loop ran while it was on (the measuring client's own load). */
export function watchEventLoop(): { stop(): string } {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return {
    stop() {
      delay.disable();
      const ms = (ns: number) => (ns / 1e6).toFixed(0);
      return `p50 ${ms(delay.percentile(50))} ms, p99 ${ms(delay.percentile(99))} ms, max ${ms(delay.max)} ms`;
    },
  };
}

/** One page of the reader's log line `stream events published`, as far as its stages go. */
interface ReaderPage {
  records: number;
  events: number;
  getRecordsMs: number;
  /** Read → the page before it done (0 when none was under way). */
  waitedMs: number;
  transactions: { lines: number; actions: number; ms: number }[];
}

/**
 * The stream reader's pages (those that published events and were read from `since` on): how big they were, how long their
 * GetRecords took and how long each waited behind the page before it, and the soldCount
 * transactions each made (lines, actions, round trip), as lines to print.
 */
export function readerPages(logs: readonly Record<string, unknown>[], since = 0): string[] {
  const pages: ReaderPage[] = [];
  for (const line of logs) {
    if (line.msg !== 'stream events published' || line.getRecordsMs === undefined) continue;
    if ((line.readAt as number) < since) continue;
    pages.push({
      records: line.records as number,
      events: (line.published as unknown[]).length,
      getRecordsMs: line.getRecordsMs as number,
      waitedMs: ((line.beforeDoneAt as number | undefined) ?? (line.readAt as number)) - (line.readAt as number),
      transactions: (line.transactions as ReaderPage['transactions'] | undefined) ?? [],
    });
  }
  if (pages.length === 0) return ['no pages logged'];
  const count = (values: number[]) => spread(values).replaceAll(' ms', '');
  const transactions = pages.flatMap((page) => page.transactions);
  /** The transactions' round trips by their number of actions. */
  const bySize = [
    [1, 10],
    [11, 40],
    [41, 70],
    [71, 100],
  ].map(([low, high]) => {
    const times = transactions.filter((t) => t.actions >= low! && t.actions <= high!).map((t) => t.ms);
    return `${low}-${high} actions: ${spread(times)}`;
  });
  return [
    `pages with events: ${pages.length}; records per page ${count(pages.map((page) => page.records))}`,
    `events per page ${count(pages.map((page) => page.events))}`,
    `soldCount transactions per page ${count(pages.map((page) => page.transactions.length))}`,
    `actions per transaction ${count(transactions.map((t) => t.actions))}`,
    `GetRecords: ${spread(pages.map((page) => page.getRecordsMs))}`,
    `page read → the page before it done: ${spread(pages.map((page) => page.waitedMs))}`,
    `soldCount transaction round trip, ${bySize.join('; ')}`,
  ];
}
