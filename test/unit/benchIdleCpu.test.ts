import { describe, expect, it } from 'vitest';
import {
  gcTraceLine,
  jitTraceLine,
  parseMigrations,
  parseSwitches,
  parseTaskStat,
  perfLayer,
  perfLayers,
  threadGroup,
} from '../../bench/idleCpuStats.js';

describe('bench:idle-cpu readings', () => {
  it('reads a GC trace line: the kind with its reason, and the main-thread pause', () => {
    expect(
      gcTraceLine(
        '[7:0x2b]     1052 ms: Scavenge 5.2 (6.1) -> 4.5 (7.1) MB, pooled: 0 MB, 0.73 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ',
      ),
    ).toEqual({ kind: 'Scavenge: allocation failure', ms: 0.73 });
    expect(
      gcTraceLine(
        '[7:0x2b]     8461 ms: Mark-Compact (reduce) 44.2 (108.7) -> 3.7 (6.3) MB, pooled: 0 MB, 15.78 / 0.00 ms  (+ 2.5 ms in 1 steps since start of marking, biggest step 2.5 ms, walltime since start of marking 19 ms) (average mu = 0.984, current mu = 0.998) finalize incremental marking via task; GC in old space requested',
      ),
    ).toEqual({ kind: 'Mark-Compact (reduce): finalize incremental marking via task', ms: 15.78 });
    expect(gcTraceLine('{"level":30,"msg":"ready"}')).toBeUndefined();
  });

  it('reads compilations (with their time) and deoptimizations from the JIT trace', () => {
    expect(
      jitTraceLine(
        '[completed compiling 0x3a6c0bc30541 <JSFunction f (sfi = 0x3a6c0bc2bb49)> (target TURBOFAN_JS) - took 0.010, 0.962, 0.024 ms]',
      ),
    ).toEqual({ kind: 'compiled TURBOFAN_JS', ms: expect.closeTo(0.996, 6) as number });
    expect(
      jitTraceLine('[bailout (kind: deopt-eager, reason: not a Smi): begin. deoptimizing 0x1 <JSFunction>'),
    ).toEqual({
      kind: 'bailout deopt-eager',
      ms: 0,
    });
    expect(jitTraceLine('[marking 0x3a6c <JSFunction f> for optimization to MAGLEV]')).toBeUndefined();
  });

  it('reads a thread from /proc: its name (spaces and parentheses kept), CPU, faults, switches, migrations', () => {
    const stat = '4242 (V8 (Worker) 1) S 1 2 3 0 -1 4194368 1234 0 0 0 250 40 0 0 20 0 7 0 100 0 0';
    expect(parseTaskStat(stat, 100)).toEqual({ name: 'V8 (Worker) 1', minorFaults: 1234, userMs: 2500, sysMs: 400 });
    expect(parseSwitches('Name:\tnode\nvoluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n')).toEqual({
      voluntary: 17,
      involuntary: 3,
    });
    expect(parseMigrations('se.sum_exec_runtime   :   1.07\nse.nr_migrations      :     9\n')).toBe(9);
    expect(threadGroup(10, 10, 'MainThread')).toBe('main thread');
    expect(threadGroup(11, 10, 'V8Worker')).toBe('V8 workers');
    expect(threadGroup(12, 10, 'libuv-worker')).toBe('libuv pool');
  });

  it('sorts perf samples into layers by thread, summing nanoseconds into ms', () => {
    expect(perfLayer('[kernel.kallsyms]', '[k] do_epoll_wait')).toBe('kernel');
    expect(perfLayer('node', '[.] v8::internal::Scavenger::ScavengePage')).toBe('V8 garbage collector');
    expect(perfLayer('node', '[.] v8::internal::maglev::MaglevGraphBuilder::Build')).toBe('V8 compilers');
    expect(perfLayer('node', '[.] Builtins_InterpreterEntryTrampoline')).toBe('V8 interpreter (bytecode handlers)');
    expect(perfLayer('node', '[.] Builtins_LdaNamedPropertyHandler')).toBe('V8 interpreter (bytecode handlers)');
    expect(perfLayer('node', '[.] Builtins_CallFunction_ReceiverIsAny')).toBe('V8 builtins');
    expect(perfLayer('node', '[.] v8::internal::JsonParser<unsigned char>::ParseJsonValue')).toBe('V8 JSON');
    expect(perfLayer('node', '[.] uv__io_poll')).toBe('Node, libuv, OpenSSL');
    expect(perfLayer('[unknown]', '[.] 0x00007f1234')).toBe('JIT code');
    const report = [
      '# comment',
      ' 1500000 \tMainThread\t[kernel.kallsyms]\t[k] do_epoll_wait',
      ' 500000  \tMainThread\t[kernel.kallsyms]\t[k] schedule',
      ' 2000000 \tV8Worker\tnode\t[.] v8::internal::ConcurrentMarking::RunMajor',
      '',
    ].join('\n');
    expect(perfLayers(report)).toEqual({ 'main: kernel': 2, 'V8 workers: V8 garbage collector': 2 });
    expect(perfLayers(report, true)).toEqual({
      'main: do_epoll_wait': 1.5,
      'main: schedule': 0.5,
      'V8 workers: v8::internal::ConcurrentMarking::RunMajor': 2,
    });
  });
});
