/**
 * The memory of a child process, read through its inspector (the child runs with
 * `--inspect=127.0.0.1:<port>`): its heap after a full garbage collection, and heap snapshots.
 * `npm run bench:memory` (memoryGrowth.ts) samples the server under load with it.
 */
import WebSocket from 'ws';

/** process.memoryUsage() of the child, after a full GC. */
export interface MemorySample {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** The V8 heap as it is (before any GC): the physical size of its spaces, and what V8 itself malloc'd. */
export interface HeapSpaces {
  /** Physical bytes of all spaces, and of the young generation's. */
  physical: number;
  newSpace: number;
  /** Bytes V8 allocated with malloc (outside its spaces). */
  malloced: number;
}

export interface HeapInspector {
  /** The heap's spaces now, without collecting anything. */
  heapSpaces(): Promise<HeapSpaces>;
  /** Collects garbage in the child (twice: what a finalizer freed goes too), then reads its memory. */
  memoryAfterGc(): Promise<MemorySample>;
  /** A heap snapshot of the child, as the JSON text V8 writes (it collects garbage first). */
  snapshot(): Promise<string>;
  close(): void;
}

interface Reply {
  id?: number;
  method?: string;
  params?: { chunk?: string };
  result?: { result?: { value?: unknown } };
  error?: { message: string };
}

/** Connects to the inspector listening on `port` (the child's first target). */
export async function connectInspector(port: number): Promise<HeapInspector> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const socket = new WebSocket(url, { maxPayload: 2 ** 30 });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  let chunks: string[] = [];
  socket.on('message', (data: Buffer) => {
    const reply = JSON.parse(data.toString()) as Reply;
    if (reply.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(reply.params?.chunk ?? '');
    if (reply.id === undefined) return;
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error) waiting?.reject(new Error(reply.error.message));
    else waiting?.resolve(reply);
  });
  socket.once('close', () => {
    for (const waiting of pending.values()) waiting.reject(new Error('inspector closed'));
    pending.clear();
  });
  const send = (method: string, params: Record<string, unknown> = {}): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });

  const evaluate = async (expression: string): Promise<unknown> => {
    const reply = await send('Runtime.evaluate', { expression, returnByValue: true });
    return JSON.parse(String(reply.result?.result?.value));
  };

  return {
    async heapSpaces() {
      return (await evaluate(`(() => {
        const v8 = process.getBuiltinModule('v8');
        const spaces = v8.getHeapSpaceStatistics();
        return JSON.stringify({
          physical: spaces.reduce((sum, space) => sum + space.physical_space_size, 0),
          newSpace: spaces.filter((space) => space.space_name === 'new_space').reduce((sum, space) => sum + space.physical_space_size, 0),
          malloced: v8.getHeapStatistics().malloced_memory,
        });
      })()`)) as HeapSpaces;
    },
    async memoryAfterGc() {
      await send('HeapProfiler.collectGarbage');
      await send('HeapProfiler.collectGarbage');
      return (await evaluate('JSON.stringify(process.memoryUsage())')) as MemorySample;
    },
    async snapshot() {
      chunks = [];
      await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false, captureNumericValue: false });
      const text = chunks.join('');
      chunks = [];
      return text;
    },
    close() {
      socket.close();
    },
  };
}
