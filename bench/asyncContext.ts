/**
 * `npm run bench:async-context`: what carrying a request's record in an AsyncLocalStorage costs a
 * promise-heavy request, against passing it explicitly (what the server does: the cost record and
 * the trace travel with the execution context). A "request" is a tree of async resolvers the shape
 * of a page of orders: 200 fields, each awaiting a leaf and then two more in parallel, about 1,600
 * promises. Each mode runs in a process of its own, the modes taking turns round by round:
 *
 * - `plain`: no AsyncLocalStorage;
 * - `als`: each request runs in `storage.run(record, …)` and every leaf reads `getStore()`;
 * - `als-hooks`: the same with `--no-async-context-frame`, the promise-hook implementation that
 *   Node 22 and earlier use (Node 24 builds AsyncLocalStorage on AsyncContextFrame instead).
 *
 * Prints the median time per request of each mode and its ratio to `plain`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { median } from './rounds.js';

const MODES = ['plain', 'als', 'als-hooks'] as const;
type Mode = (typeof MODES)[number];

const COMMAND = {
  name: 'bench:async-context',
  run: 'npm run bench:async-context --',
  usage: `[--rounds 5] [--requests 2000]

What an AsyncLocalStorage costs a promise-heavy request on this Node.js, against passing the
record explicitly, and with the promise-hook implementation of Node 22 and earlier
(--no-async-context-frame). A few seconds; needs nothing else.

  --rounds <n>     rounds, the modes taking turns (default 5)
  --requests <n>   requests per mode and round (default 2000)
  --mode <mode>    run one mode in this process and print its ms per request (what each round spawns)`,
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '2000' },
    mode: { type: 'string' },
  },
} as const;
const { values } = parseCommandLine(COMMAND);
const requests = Number(values.requests);

/** One request: 200 fields, each a leaf and then two leaves in parallel; every leaf reads the record. */
async function measure(mode: Mode): Promise<number> {
  const storage = new AsyncLocalStorage<{ n: number }>();
  let sink = 0;
  const leaf = async (record: { n: number }, i: number) => {
    // One turn of the microtask queue, as an awaited resolver's answer takes.
    await Promise.resolve();
    sink += mode === 'plain' ? record.n + i : (storage.getStore()?.n ?? 0) + i;
    return i;
  };
  const field = async (record: { n: number }, i: number) => {
    const value = await leaf(record, i);
    return Promise.all([leaf(record, value), leaf(record, value + 1)]);
  };
  const request = async (record: { n: number }) => {
    const fields: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i += 1) fields.push(field(record, i));
    await Promise.all(fields);
  };
  const run = (n: number) => (mode === 'plain' ? request({ n }) : storage.run({ n }, () => request({ n })));
  for (let n = 0; n < requests / 4; n += 1) await run(n);
  const started = performance.now();
  for (let n = 0; n < requests; n += 1) await run(n);
  const msPerRequest = (performance.now() - started) / requests;
  return sink === -1 ? 0 : msPerRequest;
}

const execFileAsync = promisify(execFile);

async function inChild(mode: Mode): Promise<number> {
  const nodeArgs = mode === 'als-hooks' ? ['--no-async-context-frame'] : [];
  const { stdout } = await execFileAsync(process.execPath, [
    ...nodeArgs,
    '--import',
    'tsx',
    import.meta.filename,
    '--mode',
    mode,
    '--requests',
    String(requests),
  ]);
  return Number(stdout.trim());
}

if (values.mode) {
  if (!(MODES as readonly string[]).includes(values.mode)) {
    exitWithUsageError(COMMAND, `--mode must be one of ${MODES.join(', ')}`);
  }
  process.stdout.write(`${await measure(values.mode as Mode)}\n`);
} else {
  const samples = new Map<Mode, number[]>(MODES.map((mode) => [mode, []]));
  for (let round = 1; round <= Number(values.rounds); round += 1) {
    for (const mode of MODES) samples.get(mode)?.push(await inChild(mode));
    process.stderr.write(`round ${round}\n`);
  }
  const plain = median(samples.get('plain') ?? []);
  console.log(`Node ${process.version}, ${requests} requests of ~1,600 promises per mode and round`);
  for (const mode of MODES) {
    const ms = median(samples.get(mode) ?? []);
    console.log(`${mode.padEnd(10)} ${(ms * 1000).toFixed(0).padStart(5)} µs/request  ${(ms / plain).toFixed(2)}x`);
  }
}
