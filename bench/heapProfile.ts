/**
 * Where an execution's bytes go: V8's sampling heap profiler over a run, collected objects
 * included (most of a request's allocation is garbage by the time it ends), summed by layer (a
 * package, a folder of src/, node's own) and by function. `bench:executors -- --heap-profile`
 * prints it per operation and executor. The sampler sees one allocation in about every
 * `SAMPLING_INTERVAL` bytes: shares are what it is for; the bench's own allocation figure is the
 * total.
 */
import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';

const SAMPLING_INTERVAL = 1024;

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** The layer of a script: `@aws-sdk/core`, `src/db`, `node`, or what is left. */
export function layerOf(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + '/node_modules/'.length).split('/');
    return scope?.startsWith('@') ? `${scope}/${name}` : (scope ?? url);
  }
  const src = /\/(src|bench|resolvers)\/(?:([^/]+)\/)?/.exec(url);
  if (src) return src[1] === 'src' && src[2] && !src[2].endsWith('.ts') ? `src/${src[2]}` : (src[1] ?? url);
  if (url.startsWith('node:')) return 'node';
  return url === '' ? '(V8, no script)' : url;
}

export interface HeapShares {
  /** Sampled KB per execution, by layer and by function (`name file:line`), largest first. */
  layers: [string, number][];
  functions: [string, number][];
}

/** Runs `run` (which makes `executions` executions) under the sampling heap profiler. */
export async function heapShares(run: () => Promise<void>, executions: number): Promise<HeapShares> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    await run();
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
      profile: { head: SamplingNode };
    };
    const layers = new Map<string, number>();
    const functions = new Map<string, number>();
    const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes);
    const walk = (node: SamplingNode) => {
      const { functionName, url, lineNumber } = node.callFrame;
      if (node.selfSize > 0) {
        add(layers, layerOf(url), node.selfSize);
        const file = url.slice(url.lastIndexOf('/') + 1);
        add(functions, `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`, node.selfSize);
      }
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    const perExecution = (map: Map<string, number>): [string, number][] =>
      [...map].map(([key, bytes]): [string, number] => [key, bytes / 1024 / executions]).sort((a, b) => b[1] - a[1]);
    return { layers: perExecution(layers), functions: perExecution(functions) };
  } finally {
    await session.post('HeapProfiler.disable').catch(() => undefined);
    session.disconnect();
  }
}

/** The bytes `run` allocates: the heap's growth over it plus what each garbage collection in it freed (v8.GCProfiler). */
export async function allocatedBytes(run: () => Promise<void>): Promise<number> {
  const profiler = new v8.GCProfiler();
  profiler.start();
  const before = v8.getHeapStatistics().used_heap_size;
  await run();
  const after = v8.getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop() as {
    statistics: {
      beforeGC: { heapStatistics: { usedHeapSize: number } };
      afterGC: { heapStatistics: { usedHeapSize: number } };
    }[];
  };
  let freed = 0;
  for (const gc of statistics)
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  return after - before + freed;
}
