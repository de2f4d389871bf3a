/**
 * `npm run check:production` (after `npm run build`): what a deployment gets. The checkout's
 * tracked files and the build (dist/) are copied to a temporary folder, where `npm ci --omit=dev`
 * installs the production dependencies only; the built server (`node dist/src/main.js`, what
 * `npm run start:prod` runs) then starts there with no configuration (embedded DynamoDB Local),
 * answers a GraphQL query, serves the playground from dist/playground/, and stops on SIGTERM.
 * Fails when any of that fails, or when node_modules is over the size limit.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseCommandLine } from '../src/cli.js';
import { ENV_SPEC } from '../src/config/index.js';
import { projectRoot } from '../src/projectRoot.js';

const { values } = parseCommandLine({
  name: 'check:production',
  run: 'npm run check:production --',
  usage: `[--max-mb 200] [--keep]

Installs the production dependencies of this checkout and its build (npm run build first) in a
temporary folder with npm ci --omit=dev, checks that node_modules is within --max-mb, and starts
the built server from it: it must answer a query, serve the playground and stop cleanly.

  --max-mb <n>   the size limit of the production node_modules, in MB (default 200)
  --keep         leave the temporary folder in place (its path is printed)`,
  options: { 'max-mb': { type: 'string', default: '200' }, keep: { type: 'boolean', default: false } },
});
const maxMb = Number(values['max-mb']);
const root = projectRoot();
const step = (message: string) => console.log(`check:production: ${message}`);
const fail = (message: string): never => {
  console.error(`check:production: ${message}`);
  process.exit(1);
};

for (const built of ['dist/src/main.js', 'dist/playground/playground.js']) {
  if (!existsSync(path.join(root, built))) fail(`${built} is missing: run npm run build first`);
}

const dir = mkdtempSync(path.join(tmpdir(), 'tablegraph-production-'));
try {
  // What a deployment copies: the tracked files (as a clone has them) and the build.
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of tracked) {
    if (!existsSync(path.join(root, file))) continue; // deleted in the working tree
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(dir, file));
  }
  cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true });
  step(`npm ci --omit=dev in ${dir}`);
  const started = performance.now();
  execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const mb = megabytes(path.join(dir, 'node_modules'));
  step(`installed ${mb.toFixed(0)} MB in ${((performance.now() - started) / 1000).toFixed(0)} s (limit ${maxMb} MB)`);
  if (mb > maxMb) fail(`the production node_modules is ${mb.toFixed(0)} MB, over ${maxMb} MB`);
  for (const absent of ['esbuild', 'react', 'react-dom', 'graphiql', 'typescript', 'tsx']) {
    if (existsSync(path.join(dir, 'node_modules', absent))) fail(`${absent} is installed in production`);
  }
  await startBuiltServer(dir);
  step('ok');
} finally {
  if (values.keep) step(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** Disk usage of a folder, as `du` counts it (allocated blocks), in MB. */
function megabytes(folder: string): number {
  let bytes = 0;
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const file = path.join(current, entry.name);
      if (entry.isDirectory()) walk(file);
      else bytes += statSync(file).blocks * 512;
    }
  };
  walk(folder);
  return bytes / 2 ** 20;
}

/** Starts `node dist/src/main.js` in `cwd` with no configuration, tries it, stops it. */
async function startBuiltServer(cwd: string): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(ENV_SPEC)) delete env[name];
  Object.assign(env, { PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json' });
  const server = spawn(process.execPath, ['dist/src/main.js'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    server.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const ready = /"msg":"tablegraph ready at (http[^"]+)"/.exec(buffered);
      if (ready?.[1]) resolve(ready[1]);
    });
    void exited.then((code) => reject(new Error(`the built server exited (${code}) before it was ready:\n${stderr}`)));
    setTimeout(() => reject(new Error(`the built server was not ready within 120 s:\n${stderr}`)), 120_000).unref();
  }).catch((error: unknown) => {
    server.kill('SIGKILL');
    return fail((error as Error).message);
  });
  step(`the built server is ready at ${url}`);
  try {
    const answer = (await (
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ products(first: 1) { nodes { productId } } }' }),
      })
    ).json()) as { data?: { products?: { nodes?: unknown[] } } };
    if (answer.data?.products?.nodes?.length !== 1) fail(`a query was not answered: ${JSON.stringify(answer)}`);
    const page = await fetch(url, { headers: { accept: 'text/html' } });
    const script = await fetch(new URL('/playground/assets/playground.js', url));
    if (page.status !== 200 || script.status !== 200) {
      fail(`the playground was not served: page ${page.status}, playground.js ${script.status}`);
    }
    step('it answered a query and served the playground');
  } finally {
    server.kill('SIGTERM');
  }
  const code = await exited;
  if (code !== 0) fail(`the built server exited with ${code} on SIGTERM:\n${stderr}`);
  if (stderr.trim() !== '') fail(`the built server wrote to stderr:\n${stderr}`);
}
