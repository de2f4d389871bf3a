/**
 * Where the slowest deliveries of `npm run bench:events` come from (eventsSoak.ts). A fan-out's
 * p99 is a few orders (each reaches about 50 subscribers): for each of them, its stages as the
 * stream reader logged them, its subscribers' receipt by instance, and what the machine was
 * doing meanwhile: how busy the cores were and how many threads wanted one (/proc/stat, sampled),
 * the CPU DynamoDB Local's JVM took, and its garbage-collection pauses (its GC log).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { ReaderTimes } from './eventStages.js';
import { wallNow } from './eventStages.js';

/** One sample of the machine: CPU busy since the sample before (0–1 of all cores), runnable threads, a process's CPU. */
interface Sample {
  at: number;
  busy: number;
  running: number;
  /** CPU seconds of each watched process since the sample before, over the interval (cores used). */
  cores: number[];
}

const readTicks = (pid: number): number => {
  try {
    // utime and stime: fields 14 and 15, after the command name in parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return NaN;
  }
};

/** Samples the machine every `intervalMs` while on (Linux; elsewhere it records nothing). */
export class MachineSampler {
  readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private last: { at: number; idle: number; total: number; ticks: number[] } | undefined;

  constructor(
    /** Processes whose CPU use is sampled (the JVM of DynamoDB Local, the consumer...). */
    private readonly pids: readonly number[],
    private readonly intervalMs = 50,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    let text: string;
    try {
      text = readFileSync('/proc/stat', 'utf8');
    } catch {
      return;
    }
    const cpu = text.slice(0, text.indexOf('\n')).split(/\s+/).slice(1).map(Number);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    const total = cpu.reduce((a, b) => a + b, 0);
    const running = Number(/procs_running (\d+)/.exec(text)?.[1] ?? NaN);
    const ticks = this.pids.map(readTicks);
    const at = wallNow();
    const last = this.last;
    this.last = { at, idle, total, ticks };
    if (!last || total === last.total) return;
    const seconds = (at - last.at) / 1000;
    this.samples.push({
      at,
      busy: 1 - (idle - last.idle) / (total - last.total),
      running,
      // Clock ticks are 1/100 s on Linux.
      cores: ticks.map((tick, i) => (tick - (last.ticks[i] ?? NaN)) / 100 / seconds),
    });
  }

  /** Over [from, to]: the cores' mean busy share, the most runnable threads, each process's mean cores used. */
  within(from: number, to: number): { busy: number; running: number; cores: number[] } | undefined {
    const inside = this.samples.filter((sample) => sample.at >= from && sample.at <= to + this.intervalMs);
    if (inside.length === 0) return undefined;
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    return {
      busy: mean(inside.map((sample) => sample.busy)),
      running: Math.max(...inside.map((sample) => sample.running)),
      cores: this.pids.map((_, i) => mean(inside.map((sample) => sample.cores[i] ?? NaN))),
    };
  }
}

/** A pause of the JVM's garbage collector: when it ended (wall clock, ms) and how long it took. */
export interface GcPause {
  endAt: number;
  ms: number;
}

/**
 * The pauses in a JVM log written with `-Xlog:gc:file=<path>:time`: lines such as
 * `[2026-12-06T18:40:01.123+0000] GC(3) Pause Young (Allocation Failure) 30M->10M(64M) 5.123ms`.
 */
export function gcPauses(path: string): GcPause[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const pauses: GcPause[] = [];
  for (const line of text.split('\n')) {
    const match = /^\[([^\]]+)\].*Pause.* ([0-9.]+)ms$/.exec(line);
    if (!match) continue;
    const endAt = Date.parse(match[1]!.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
    if (Number.isFinite(endAt)) pauses.push({ endAt, ms: Number(match[2]) });
  }
  return pauses;
}

/** One order of a round, as far as the bench and the reader saw it. */
export interface OrderTrace {
  index: number;
  orderId: string;
  sentAt: number;
  answeredAt: number;
  reader: ReaderTimes | undefined;
  /** Each subscriber's receipt (wall clock) and the instance it listened on. */
  receipts: { at: number; instance: number }[];
}

const ms = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(0));

/**
 * The orders that hold the slowest 1% of a round's deliveries (at most `limit`), slowest first,
 * each a line: its place in the round, its stages, its subscribers' receipt by instance, and the
 * machine over its trip.
 */
export function slowestOrders(
  orders: readonly OrderTrace[],
  roundStart: number,
  machine: MachineSampler,
  pauses: readonly GcPause[],
  processNames: readonly string[],
  limit = 5,
): string[] {
  const deliveries = orders
    .flatMap((order) => order.receipts.map((receipt) => ({ order, ms: receipt.at - order.answeredAt })))
    .sort((a, b) => b.ms - a.ms);
  const tail = deliveries.slice(0, Math.max(1, Math.ceil(deliveries.length / 100)));
  const chosen = [...new Set(tail.map((delivery) => delivery.order))].slice(0, limit);
  return chosen.map((order) => {
    const r = order.reader;
    const last = Math.max(...order.receipts.map((receipt) => receipt.at));
    const byInstance = [0, 1, 2].map((instance) => {
      const times = order.receipts.filter((receipt) => receipt.instance === instance).map((receipt) => receipt.at);
      return times.length === 0 || !r ? '–' : `${ms(Math.max(...times) - r.publishedAt)}`;
    });
    const window = machine.within(order.sentAt, last);
    const gc = pauses.filter((pause) => pause.endAt >= order.sentAt && pause.endAt - pause.ms <= last);
    const cores = window ? window.cores.map((used, i) => `${processNames[i]} ${used.toFixed(2)}`).join(', ') : '';
    return [
      `#${order.index} sent +${ms(order.sentAt - roundStart)} ms: answer ${ms(order.answeredAt - order.sentAt)}`,
      `→ read ${ms(r && r.readAt - order.answeredAt)} (GetRecords ${ms(r?.getRecordsMs)})`,
      `→ published ${ms(r && r.publishedAt - r.readAt)} (page before ${ms(r && r.waitedMs)}, soldCount ${ms(r?.transactionMs)})`,
      `→ last receipt by instance ${byInstance.join(' / ')}, slowest ${ms(last - order.answeredAt)} ms from the answer;`,
      window
        ? `cores busy ${(window.busy * 100).toFixed(0)}%, up to ${window.running} runnable; cores used: ${cores};`
        : '',
      `JVM GC ${gc.length} pauses, ${gc.reduce((sum, pause) => sum + pause.ms, 0).toFixed(0)} ms`,
    ]
      .filter(Boolean)
      .join(' ');
  });
}

/** The machine over a whole round: mean busy share, runnable threads at p50 / max, each process's cores. */
export function machineLine(
  machine: MachineSampler,
  from: number,
  to: number,
  pauses: readonly GcPause[],
  processNames: readonly string[],
): string {
  const window = machine.within(from, to);
  const gc = pauses.filter((pause) => pause.endAt >= from && pause.endAt - pause.ms <= to);
  const longest = gc.reduce((max, pause) => Math.max(max, pause.ms), 0);
  const cores = window ? window.cores.map((used, i) => `${processNames[i]} ${used.toFixed(2)}`).join(', ') : '';
  return `${window ? `cores busy ${(window.busy * 100).toFixed(0)}% (up to ${window.running} threads runnable); cores used: ${cores}; ` : ''}DynamoDB Local's GC: ${gc.length} pauses, ${gc.reduce((sum, pause) => sum + pause.ms, 0).toFixed(0)} ms in all, longest ${longest.toFixed(0)} ms`;
}

/** The pid of this process's child named `command` (its /proc comm), if there is one (Linux). */
export function childPid(command: string): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (name === command && parent === process.pid) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}
