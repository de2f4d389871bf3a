/**
 * What bench:idle-cpu prints: one load run's readings turned into figures per request, and the
 * tables of the rounds (medians with their range; by layer and by function with --perf).
 */
import { median } from './rounds.js';
import { threadGroup } from './idleCpuStats.js';
import type { GcEvent, ThreadSample } from './idleCpuStats.js';

/** One load run's figures, per good request. */
export interface Sample {
  requestsPerSecond: number;
  cpuMs: number;
  byThread: Record<string, number>;
  mainSysMs: number;
  sleeps: number;
  preemptions: number;
  migrations: number;
  pageFaults: number;
  gcCount: number;
  gcMs: number;
  gcByKind: Record<string, number>;
  /** Optimized compilations finished, their compiler time, and deoptimizations (with --trace-jit). */
  compiles: number;
  compileMs: number;
  bailouts: number;
  /** With --perf: ms per request by `<thread group>: <layer>`. */
  layers: Record<string, number>;
  /** With --perf-symbols: ms per request by `<thread group>: <symbol>`. */
  symbols: Record<string, number>;
}

export function describe(
  before: Map<number, ThreadSample>,
  after: Map<number, ThreadSample>,
  gc: GcEvent[],
  pid: number,
  requests: number,
): Sample {
  const n = Math.max(requests, 1);
  const byThread: Record<string, number> = {};
  let cpuMs = 0;
  let mainSysMs = 0;
  let sleeps = 0;
  let preemptions = 0;
  let migrations = 0;
  let pageFaults = 0;
  for (const [tid, end] of after) {
    const start = before.get(tid) ?? {
      ...end,
      userMs: 0,
      sysMs: 0,
      voluntary: 0,
      involuntary: 0,
      minorFaults: 0,
      migrations: 0,
    };
    const used = end.userMs - start.userMs + (end.sysMs - start.sysMs);
    const group = threadGroup(tid, pid, end.name);
    byThread[group] = (byThread[group] ?? 0) + used / n;
    cpuMs += used / n;
    if (tid === pid) {
      mainSysMs = (end.sysMs - start.sysMs) / n;
      sleeps = (end.voluntary - start.voluntary) / n;
      preemptions = (end.involuntary - start.involuntary) / n;
      migrations = (end.migrations - start.migrations) / n;
      // Minor faults are counted for the whole process on the main thread's line.
      pageFaults = (end.minorFaults - start.minorFaults) / n;
    }
  }
  const gcByKind: Record<string, number> = {};
  for (const event of gc) gcByKind[event.kind] = (gcByKind[event.kind] ?? 0) + 1 / n;
  return {
    requestsPerSecond: 0,
    cpuMs,
    byThread,
    mainSysMs,
    sleeps,
    preemptions,
    migrations,
    pageFaults,
    gcCount: gc.length / n,
    gcMs: gc.reduce((sum, event) => sum + event.ms, 0) / n,
    gcByKind,
    compiles: 0,
    compileMs: 0,
    bailouts: 0,
    layers: {},
    symbols: {},
  };
}

export function render(all: Map<string, Sample[]>): string {
  const format = (values: number[], digits: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = median(values).toFixed(digits);
    return values.length > 1
      ? `${mid} [${(sorted[0] as number).toFixed(digits)}–${(sorted.at(-1) as number).toFixed(digits)}]`
      : mid;
  };
  const groups = [...new Set([...all.values()].flatMap((list) => list.flatMap((s) => Object.keys(s.byThread))))].sort();
  const kinds = [...new Set([...all.values()].flatMap((list) => list.flatMap((s) => Object.keys(s.gcByKind))))].sort();
  const header = [
    'operation',
    'c',
    'system',
    'req/s',
    'CPU ms/req',
    ...groups.map((group) => `${group} ms/req`),
    'main kernel ms/req',
    'main sleeps/req',
    'preemptions/req',
    'main migrations/req',
    'page faults/req',
    'GC main ms/req',
    'GCs/1000 req',
    ...kinds.map((kind) => `${kind} /1000 req`),
    'compiles /1000 req',
    'compiler ms/req',
    'deopts /1000 req',
  ];
  const rows = [...all].map(([key, list]) => {
    const [op, level, system] = key.split('|');
    return [
      op,
      level,
      system,
      format(
        list.map((s) => s.requestsPerSecond),
        0,
      ),
      format(
        list.map((s) => s.cpuMs),
        2,
      ),
      ...groups.map((group) =>
        format(
          list.map((s) => s.byThread[group] ?? 0),
          3,
        ),
      ),
      format(
        list.map((s) => s.mainSysMs),
        3,
      ),
      format(
        list.map((s) => s.sleeps),
        2,
      ),
      format(
        list.map((s) => s.preemptions),
        2,
      ),
      format(
        list.map((s) => s.migrations),
        2,
      ),
      format(
        list.map((s) => s.pageFaults),
        1,
      ),
      format(
        list.map((s) => s.gcMs),
        3,
      ),
      format(
        list.map((s) => s.gcCount * 1000),
        1,
      ),
      ...kinds.map((kind) =>
        format(
          list.map((s) => (s.gcByKind[kind] ?? 0) * 1000),
          1,
        ),
      ),
      format(
        list.map((s) => s.compiles * 1000),
        1,
      ),
      format(
        list.map((s) => s.compileMs),
        3,
      ),
      format(
        list.map((s) => s.bailouts * 1000),
        1,
      ),
    ];
  });
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
  ].join('\n');
}

export function renderLayers(all: Map<string, Sample[]>, field: 'layers' | 'symbols', top = Infinity): string {
  const columns = [...all.keys()];
  const layers = [...new Set([...all.values()].flatMap((list) => list.flatMap((s) => Object.keys(s[field]))))];
  // A function's samples are sparse (absent from some rounds): the mean of the rounds, not the median.
  const average = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(values.length, 1);
  const summary = field === 'layers' ? median : average;
  const medianOf = (key: string, layer: string) => summary((all.get(key) ?? []).map((s) => s[field][layer] ?? 0));
  const total = (layer: string) => columns.reduce((sum, key) => sum + medianOf(key, layer), 0);
  layers.sort((a, b) => total(b) - total(a));
  const label = (key: string) =>
    key
      .split('|')
      .join(' ')
      .replace(/ (\d+) /, ' c=$1 ');
  const what = field === 'layers' ? 'layer' : 'function';
  return [
    `CPU ms per request by thread and ${what} (perf, cpu-clock; ${field === 'layers' ? 'medians' : 'means'} of the rounds${top < Infinity ? `; the ${top} largest` : ''}):`,
    '',
    `| thread: ${what} | ${columns.map(label).join(' | ')} |`,
    `| --- | ${columns.map(() => '---:').join(' | ')} |`,
    `| **all** | ${columns.map((key) => layers.reduce((sum, layer) => sum + medianOf(key, layer), 0).toFixed(3)).join(' | ')} |`,
    ...layers
      .slice(0, top)
      .map(
        (layer) =>
          `| ${layer.replace(/\|/g, '\\|')} | ${columns.map((key) => medianOf(key, layer).toFixed(3)).join(' | ')} |`,
      ),
    '',
  ].join('\n');
}
