/**
 * `npm run bench:fixed-cost`: what every operation pays whatever it reads. `{ __typename }` goes
 * through `handleGraphQLHttp` in one process (the body read, admission, the viewer of a signed
 * token, execution, the report, metrics and the caching headers), with no socket and no DynamoDB
 * call, and the CPU per request is printed. It runs twice per round, each time in a process of
 * its own: under tsx (as `npm start` and `npm run bench` run the server, function names kept by
 * its transform) and bundled by esbuild as the image is (deploy/bundle.ts: names not kept).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { HeaderMap } from '@apollo/server';
import { buildSync } from 'esbuild';
import { pino } from 'pino';
import { signToken } from '../src/auth/tokens.js';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import { createDynamo } from '../src/db/client.js';
import { CursorCodec } from '../src/db/cursor.js';
import { TrustedDocuments } from '../src/pipeline/documents/trustedDocuments.js';
import { handleGraphQLHttp } from '../src/pipeline/http/graphqlHttp.js';
import { createPipeline } from '../src/pipeline/pipeline.js';
import { createMetrics } from '../src/pipeline/report/metrics.js';
import { projectRoot } from '../src/projectRoot.js';
import { median } from './rounds.js';

const MODES = ['tsx', 'bundled'] as const;
type Mode = (typeof MODES)[number];

const COMMAND = {
  name: 'bench:fixed-cost',
  run: 'npm run bench:fixed-cost --',
  usage: `[--rounds 3] [--requests 20000]

CPU per request of { __typename } through the GraphQL-over-HTTP handler in one process, no socket
and no DynamoDB call: under tsx, and bundled by esbuild as the image is. Under a minute; needs
nothing else.

  --rounds <n>     rounds, the two modes taking turns (default 3)
  --requests <n>   requests per mode and round, after as many to warm up (default 20000)
  --measure        measure in this process and print its µs per request (what each round spawns)`,
  options: {
    rounds: { type: 'string', default: '3' },
    requests: { type: 'string', default: '20000' },
    measure: { type: 'boolean', default: false },
  },
} as const;
const { values } = parseCommandLine(COMMAND);
const requests = Number(values.requests);
const rounds = Number(values.rounds);
if (!(requests > 0) || !(rounds > 0)) exitWithUsageError(COMMAND, '--rounds and --requests must be positive');

async function measure(): Promise<number> {
  const auth = { secret: 'fixed-cost-secret-of-at-least-thirty-two-characters', issuer: 'bench', audience: 'bench' };
  const pipeline = createPipeline({
    // Never called: the operation reads nothing.
    data: {
      dynamo: createDynamo({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1' }),
      tableName: 'fixed-cost',
      cursors: new CursorCodec('fixed-cost-cursor-secret-of-at-least-thirty-two'),
    },
    log: pino({ level: 'warn' }),
    auth,
    limits: DEFAULT_LIMITS,
    introspection: false,
    persistedOnly: false,
    documents: new TrustedDocuments(),
    metrics: createMetrics({ process: false }),
  });
  const authorization = `Bearer ${await signToken({ userId: 'bench', role: 'admin' }, auth)}`;
  const body = JSON.stringify({ operationName: 'Ping', query: 'query Ping { __typename }', variables: {} });
  const one = async () => {
    const headers = new HeaderMap([
      ['content-type', 'application/json'],
      ['content-length', String(body.length)],
      ['accept', 'application/json'],
      ['authorization', authorization],
    ]);
    const response = await handleGraphQLHttp(
      { method: 'POST', search: '', headers, body },
      { pipeline, apollo: undefined as never, transport: 'http' },
    );
    if (response.status !== 200) throw new Error(`answered ${response.status}: ${response.body}`);
  };
  for (let i = 0; i < requests; i += 1) await one();
  const before = process.cpuUsage();
  for (let i = 0; i < requests; i += 1) await one();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / requests;
}

/** This file bundled as deploy/bundle.ts bundles the server, beside the schema it reads. */
function bundle(dir: string): string {
  const outfile = path.join(dir, 'fixedCost.mjs');
  buildSync({
    entryPoints: [import.meta.filename],
    absWorkingDir: projectRoot(),
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    banner: { js: "import { createRequire as __req } from 'node:module'; const require = __req(import.meta.url);" },
    logLevel: 'error',
  });
  copyFileSync(path.join(projectRoot(), 'schema.graphql'), path.join(dir, 'schema.graphql'));
  return outfile;
}

const execFileAsync = promisify(execFile);

async function inChild(mode: Mode, bundled: string): Promise<number> {
  const args = ['--measure', '--requests', String(requests)];
  const command = mode === 'tsx' ? ['--import', 'tsx', import.meta.filename, ...args] : [bundled, ...args];
  const { stdout } = await execFileAsync(process.execPath, command, { cwd: projectRoot() });
  return Number(stdout.trim().split('\n').at(-1));
}

if (values.measure) {
  process.stdout.write(`${(await measure()).toFixed(2)}\n`);
} else {
  const dir = mkdtempSync(path.join(tmpdir(), 'tablegraph-fixed-cost-'));
  try {
    const bundled = bundle(dir);
    const results: Record<Mode, number[]> = { tsx: [], bundled: [] };
    for (let round = 0; round < rounds; round += 1) {
      for (const mode of round % 2 ? [...MODES].reverse() : MODES) {
        const us = await inChild(mode, bundled);
        results[mode].push(us);
        process.stdout.write(`round ${round + 1} ${mode.padEnd(7)} ${us.toFixed(1)} µs CPU per request\n`);
      }
    }
    for (const mode of MODES) {
      const all = results[mode];
      process.stdout.write(
        `${mode.padEnd(7)} median ${median(all).toFixed(1)} µs [${Math.min(...all).toFixed(1)}-${Math.max(...all).toFixed(1)}]\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
