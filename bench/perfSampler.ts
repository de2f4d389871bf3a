/**
 * perf sampling a process for bench:idle-cpu: every thread, CPU time only (cpu-clock), summed by
 * layer (and by function when asked) through idleCpuStats.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { perfLayers } from './idleCpuStats.js';

/** perf sampling the process (every thread, CPU time only) until `stop`, which returns ms by layer. */
export async function startPerf(
  pid: number,
  topSymbols: number,
): Promise<{ stop(): Promise<{ layers: Record<string, number>; symbols: Record<string, number> }> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'idle-cpu-perf-'));
  const file = path.join(dir, 'perf.data');
  const perf = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '1999', '-p', String(pid), '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  perf.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => perf.once('exit', resolve));
  perf.once('error', (error) => {
    throw new Error(`perf could not start (is it installed?): ${error.message}`);
  });
  // perf attaches to the running process in a few ms.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return {
    async stop() {
      perf.kill('SIGINT');
      await exited;
      try {
        const report = execFileSync(
          'perf',
          ['report', '-i', file, '--stdio', '--sort', 'comm,dso,sym', '-F', 'period,comm,dso,sym', '-t', '\t'],
          { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
        );
        return { layers: perfLayers(report), symbols: topSymbols > 0 ? perfLayers(report, true) : {} };
      } catch (error) {
        throw new Error(`perf report failed: ${String(error)}\n${stderr}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
