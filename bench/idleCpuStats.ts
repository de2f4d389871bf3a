/**
 * What bench:idle-cpu reads: a process's threads from /proc (CPU, context switches, page faults)
 * and V8's `--trace-gc` lines. Pure parsing apart from `readThreads`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { ticksPerSecond } from './procs.js';

export interface ThreadSample {
  name: string;
  userMs: number;
  sysMs: number;
  /** Times the thread gave up the CPU to wait (for the event loop's poll, a lock, a read). */
  voluntary: number;
  /** Times it was preempted. */
  involuntary: number;
  /** Minor page faults of the whole process (a thread's stat line counts only its own). */
  minorFaults: number;
  /** Times the scheduler moved the thread to another CPU (its caches left behind). */
  migrations: number;
}

/** `/proc/<pid>/task/<tid>/stat` → name, user and system ms, minor faults. */
export function parseTaskStat(
  stat: string,
  ticks: number,
): Pick<ThreadSample, 'name' | 'userMs' | 'sysMs' | 'minorFaults'> {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const name = stat.slice(open + 1, close);
  // Fields after the name start at state (field 3): minflt is field 10, utime 14, stime 15.
  const fields = stat.slice(close + 2).split(' ');
  const ms = (field: number) => (Number(fields[field - 3]) * 1000) / ticks;
  return { name, minorFaults: Number(fields[10 - 3]), userMs: ms(14), sysMs: ms(15) };
}

/** `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` of a `status` file. */
export function parseSwitches(status: string): Pick<ThreadSample, 'voluntary' | 'involuntary'> {
  const count = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { voluntary: count('voluntary_ctxt_switches'), involuntary: count('nonvoluntary_ctxt_switches') };
}

/** `se.nr_migrations` of a `sched` file (0 where the kernel does not show it). */
export function parseMigrations(sched: string): number {
  return Number(/^se\.nr_migrations\s*:\s*(\d+)/m.exec(sched)?.[1] ?? 0);
}

/** Every thread of the process now (a thread that ended meanwhile is left out). */
export function readThreads(pid: number): Map<number, ThreadSample> {
  const ticks = ticksPerSecond();
  const threads = new Map<number, ThreadSample>();
  for (const entry of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = parseTaskStat(readFileSync(`/proc/${pid}/task/${entry}/stat`, 'utf8'), ticks);
      const switches = parseSwitches(readFileSync(`/proc/${pid}/task/${entry}/status`, 'utf8'));
      const migrations = parseMigrations(readFileSync(`/proc/${pid}/task/${entry}/sched`, 'utf8'));
      threads.set(Number(entry), { ...stat, ...switches, migrations });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  // The process's own stat line counts the faults of all its threads.
  const process = parseTaskStat(readFileSync(`/proc/${pid}/stat`, 'utf8'), ticks);
  const main = threads.get(pid);
  if (main) main.minorFaults = process.minorFaults;
  return threads;
}

/** Threads grouped by what they do (names as Node 24 and V8 set them). */
export function threadGroup(tid: number, pid: number, name: string): string {
  if (tid === pid) return 'main thread';
  if (/^V8/.test(name)) return 'V8 workers';
  if (/^libuv-worker/.test(name)) return 'libuv pool';
  return 'other threads';
}

export interface GcEvent {
  /** Scavenge, Minor Mark-Sweep, Mark-Compact, Mark-Compact (reduce)…, with the reason: `Mark-Compact: idle task`. */
  kind: string;
  /** The pause on the main thread, ms. */
  ms: number;
}

/**
 * One `--trace-gc` line, e.g. `[7:0x2b]  1052 ms: Scavenge 5.2 (6.1) -> 4.5 (7.1) MB, pooled:
 * 0.0 MB, 0.73 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure;` → the
 * kind with its reason and the pause. Anything else → undefined.
 */
export function gcTraceLine(line: string): GcEvent | undefined {
  const match =
    /\d+ ms: ([A-Za-z][A-Za-z -]*?(?: \([a-z ]+\))?) [\d.]+ \([\d.]+\) -> .*? ([\d.]+) \/ [\d.]+ ms\b(.*)$/.exec(line);
  if (!match) return undefined;
  const [, type, ms, rest] = match as unknown as [string, string, string, string];
  // The reason is the text after the last parenthesised group: `... current mu = 0.9) task; GC in old space requested`.
  const reason = (/\)\s*([^()]*)$/.exec(rest)?.[1] ?? rest).split(';')[0]?.trim() ?? '';
  return { kind: reason ? `${type}: ${reason}` : type, ms: Number(ms) };
}

/**
 * One `--trace-opt`/`--trace-deopt` line → a compilation finished (by tier, with its time on the
 * compiler thread) or a deoptimization. Anything else → undefined.
 */
export function jitTraceLine(line: string): GcEvent | undefined {
  const compiled = /^\[completed compiling .*\(target ([A-Z_]+)\).* took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/.exec(line);
  if (compiled) {
    const [, target, prepare, execute, finalize] = compiled as unknown as [string, string, string, string, string];
    return { kind: `compiled ${target}`, ms: Number(prepare) + Number(execute) + Number(finalize) };
  }
  const bailout = /^\[bailout \(kind: ([a-z-]+)/.exec(line);
  if (bailout) return { kind: `bailout ${bailout[1] as string}`, ms: 0 };
  return undefined;
}

/** Thread groups by the names perf reports (the thread's comm; the main thread is `MainThread`). */
export function threadGroupOfComm(comm: string): string {
  if (comm === 'MainThread' || comm === 'node') return 'main';
  if (/^(V8|DelayedTask)/.test(comm)) return 'V8 workers';
  if (/^libuv-worker/.test(comm)) return 'libuv pool';
  return 'other threads';
}

/**
 * The layer of one symbol of a `perf report` row: the kernel, V8's garbage collector, its
 * compilers, its runtime, its builtins (the interpreter among them), the JIT-compiled JavaScript
 * (ours and every library's: perf cannot tell them apart without a map), Node with libuv, libc.
 */
export function perfLayer(dso: string, symbol: string): string {
  const sym = symbol.replace(/^\[[.k]\]\s*/, '');
  if (dso.startsWith('[kernel')) return 'kernel';
  if (dso === '[vdso]') return 'kernel (vdso clock)';
  if (
    dso.startsWith('[JIT]') ||
    dso.startsWith('perf-') ||
    dso === '[unknown]' ||
    /^(JS|LazyCompile|Function):/.test(sym)
  )
    return 'JIT code';
  if (/^lib(c|m|pthread|stdc\+\+|gcc_s)[.-]/.test(dso) || dso.startsWith('ld-linux')) return 'libc';
  if (/^Builtins_(\w+Handler(_Wide|_ExtraWide)?|InterpreterEntryTrampoline\w*|InterpreterPushArgs\w*)$/.test(sym)) {
    return 'V8 interpreter (bytecode handlers)';
  }
  if (/^Builtins_/.test(sym)) return 'V8 builtins';
  if (/Json(Parser|Stringifier)|JsonParse|JsonStringify/.test(sym)) return 'V8 JSON';
  if (
    /Heap|Scaveng|MarkCompact|Marking|Marker|Sweep|Evacuat|Compactor|MinorMS|RememberedSet|SlotSet|TypedSlot|MemoryAllocator|MemoryChunk|PagedSpace|NewSpace|SemiSpace|GCTracer|LocalAllocationBuffer|MemoryReducer|Worklist|cppgc|EphemeronTable|ConcurrentMarking|RootVisitor|ObjectVisitor|BodyDescriptor|WeakObjects|ArrayBufferSweeper|ExternalPointerTable/.test(
      sym,
    )
  ) {
    return 'V8 garbage collector';
  }
  if (
    /compiler::|maglev::|baseline::|interpreter::Bytecode(Generator|ArrayBuilder|RegisterOptimizer)|Parser|Scanner|Zone|AstNode|DeclarationScope|Deoptimizer|OptimizedCompilationJob|Compiler::|TurboFan|turboshaft::|RegisterAllocator|Pipeline/.test(
      sym,
    )
  ) {
    return 'V8 compilers';
  }
  if (/^(uv_|uv__)|node::|^napi_|llhttp|nghttp|ares_|ssl|SSL_|OPENSSL|EVP_|BN_|sha\d|simdutf|ada::/.test(sym)) {
    return 'Node, libuv, OpenSSL';
  }
  if (dso === 'node' || dso.endsWith('/node')) return 'V8 runtime (ICs, objects, allocation)';
  return 'other';
}

/**
 * `perf report -F period,comm,dso,sym -t '\t'` → ms by `<thread group>: <layer>`, or by
 * `<thread group>: <symbol>` when `bySymbol`.
 */
export function perfLayers(report: string, bySymbol = false): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const line of report.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [period, comm, dso, sym] = line.split('\t').map((part) => part.trim());
    if (!period || !comm || dso === undefined || sym === undefined) continue;
    const what = bySymbol ? sym.replace(/^\[[.k]\]\s*/, '') : perfLayer(dso, sym);
    const key = `${threadGroupOfComm(comm)}: ${what}`;
    // cpu-clock periods are nanoseconds.
    totals[key] = (totals[key] ?? 0) + Number(period) / 1e6;
  }
  return totals;
}
