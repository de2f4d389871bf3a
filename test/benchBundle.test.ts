/**
 * The benchmark measures what ships: its tablegraph runs from the esbuild bundle of the image
 * (`node server.mjs` in the bundle's folder, production mode, bench/bundle.ts and bench/procs.ts),
 * and that bundle answers every read operation of the benchmark exactly as the same server under
 * tsx does: the same status, the same headers (ETag, Content-Type, caching, Vary, compression) and
 * the same bytes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchBundle, originalUrl } from '../bench/bundle.js';
import { loadBenchConfig } from '../bench/config.js';
import { buildDataset, seedDataset } from '../bench/dataset.js';
import { operations } from '../bench/operations.js';
import type { Child } from '../bench/procs.js';
import { setSystemsRuntime } from '../bench/procs.js';
import { JWT_SECRET, startSystem, SYSTEMS } from '../bench/systems.js';
import { bundleEntry, temporaryFolder } from '../deploy/bundle.js';
import { CONTAINER_ENTRIES } from '../deploy/containerImage.js';
import { signToken } from '../src/auth/tokens.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { baselineNewTable } from '../src/migrations/runner.js';
import { projectRoot } from '../src/projectRoot.js';
import { endpoint } from './support/harness.js';

const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
const tableName = `bench-bundle-${randomUUID()}`;
const config = loadBenchConfig(['--quick'], {});
const data = buildDataset(config);
const children: Child[] = [];
let headers: Record<string, string>;
let tsx: Child;
let bundled: Child;

beforeAll(async () => {
  await ensureTable(dynamo.client, tableName, endpoint());
  await baselineNewTable(dynamo.doc, tableName);
  await seedDataset(dynamo.doc, tableName, data, config, () => {});
  const token = await signToken(
    { userId: 'bench-admin', role: 'admin' },
    { secret: JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' },
  );
  headers = { authorization: `Bearer ${token}` };
  const systemEnv = { endpoint: endpoint(), tableName, headers };
  setSystemsRuntime('tsx');
  tsx = await startSystem(SYSTEMS.server, systemEnv);
  children.push(tsx);
  setSystemsRuntime('bundle');
  bundled = await startSystem(SYSTEMS.server, systemEnv);
  children.push(bundled);
}, 120_000);

afterAll(async () => {
  setSystemsRuntime('bundle');
  await Promise.all(children.map((child) => child.stop()));
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
});

/**
 * One POST on a connection of its own (the bundling in this process blocks its event loop for
 * seconds, long enough for a server to close an idle keep-alive connection a pool would reuse),
 * read with node:http so that a compressed body is compared as sent.
 */
const answer = (url: string, body: unknown, extra: Record<string, string> = {}) =>
  new Promise<{ status: number | undefined; headers: [string, unknown][]; body: string }>((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers, ...extra } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            headers: Object.entries(response.headers).filter(([name]) => name !== 'date' && name !== 'x-request-id'),
            body: Buffer.concat(chunks).toString('base64'),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });

describe('the benchmark’s systems', () => {
  it('run tablegraph as the image does: node server.mjs in the bundle’s folder, no tsx', () => {
    const commandLine = readFileSync(`/proc/${bundled.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    expect(commandLine.slice(1)).toEqual([path.join(benchBundle().dir, 'server.mjs')]);
    expect(readFileSync(path.join(benchBundle().dir, 'schema.graphql'), 'utf8')).toBe(
      readFileSync(path.join(projectRoot(), 'schema.graphql'), 'utf8'),
    );
    // The tsx child is what --tsx runs, for contrast.
    expect(readFileSync(`/proc/${tsx.pid}/cmdline`, 'utf8')).toContain('tsx');
  });

  it('bundle the server byte for byte as the image’s bundle', () => {
    const outfile = path.join(temporaryFolder('tablegraph-bench-test-'), 'server.mjs');
    bundleEntry(CONTAINER_ENTRIES.server, outfile);
    const hash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(hash(benchBundle().file(CONTAINER_ENTRIES.server))).toBe(hash(outfile));
  }, 60_000);

  it('name the source of a bundled function for the profile, through the bundle’s source map', () => {
    const file = benchBundle().file(CONTAINER_ENTRIES.server);
    const lines = readFileSync(file, 'utf8').split('\n');
    const line = lines.findIndex((text) => text.includes('async function sendBody('));
    const column = lines[line]?.indexOf('async function sendBody(') ?? -1;
    expect(line).toBeGreaterThan(0);
    const url = pathToFileURL(file).href;
    expect(originalUrl(url, line, column)).toBe(
      pathToFileURL(path.join(projectRoot(), 'src/transports/http/send.ts')).href,
    );
    const graphqlLine = lines.findIndex((text) => text.includes('function executeOperation('));
    expect(originalUrl(url, graphqlLine, 0)).toMatch(/\/node_modules\/graphql\/execution\/execute\.js$/);
    // Not a bundle: as it is.
    expect(originalUrl('node:internal/streams/writable', 10, 2)).toBe('node:internal/streams/writable');
  });

  const reads = operations(data, 'bundle-test').filter((op) => !op.mutation);

  it.each(reads.map((op) => [op.id, op] as const))(
    '%s: the bundle answers as tsx does (status, headers, bytes; plain and gzip)',
    async (_id, op) => {
      const next = op.variables(config.seed, 'bundle-test');
      for (let i = 0; i < 3; i += 1) {
        const body = { operationName: op.operationName, query: op.query, variables: next() };
        for (const extra of [{}, { 'accept-encoding': 'gzip' }] as Record<string, string>[]) {
          const [fromTsx, fromBundle] = await Promise.all([
            answer(tsx.url, body, extra),
            answer(bundled.url, body, extra),
          ]);
          expect(fromTsx.status).toBe(200);
          expect(fromBundle).toEqual(fromTsx);
        }
      }
    },
  );
});
