/** The client side of codegen: the typed example client against a live server, and the drift check. */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../../src/db/batchWrite.js';
import { demoItems } from '../../src/seed/seed.js';
import { startTestServer, tokenFor } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { PROJECT_ROOT, runNode } from '../support/serverProcess.js';

describe('the typed example client', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    await putItems(server.dynamo.doc, server.tableName, demoItems());
  });
  afterAll(() => server.stop());

  it("walks alice's orders page by page and places an order", async () => {
    const client = runNode('client/exampleClient.ts', {
      GRAPHQL_URL: server.url,
      TABLEGRAPH_TOKEN: await tokenFor('alice'),
    });
    const exit = await client.exited;
    expect(client.stderr()).not.toMatch(/example client:/);
    expect(exit.code).toBe(0);
    const output = client.stdout();
    expect(output).toContain('walked 30 orders of alice in 3 pages');
    const orderId = /placed order (\S+) \(PLACED\)/.exec(output)?.[1];
    expect(orderId).toBeDefined();
    const stored = await server.gql('query($id: ID!) { order(orderId: $id) { user { userId } status } }', {
      id: orderId,
    });
    expect(stored.data?.order).toEqual({ user: { userId: 'alice' }, status: 'PLACED' });
  }, 60_000);
});

describe('npm run codegen:check', () => {
  let workdir: string;
  beforeAll(() => {
    // A copy of what codegen reads and writes, so the test can change the schema safely.
    workdir = mkdtempSync(path.join(tmpdir(), 'codegen-drift-'));
    const entries = [
      ...['codegen.yml', 'schema.graphql', 'client/operations', 'client/generated', 'src/generated'],
      ...['examples/storefront/src/operations.graphql', 'examples/storefront/src/gql'],
    ];
    for (const entry of entries) {
      cpSync(path.join(PROJECT_ROOT, entry), path.join(workdir, entry), { recursive: true });
    }
    // codegen resolves its plugins from the working directory.
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(workdir, 'node_modules'));
  });
  afterAll(() => rmSync(workdir, { recursive: true, force: true }));

  const check = () =>
    spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'node_modules/@graphql-codegen/cli/cjs/bin.js'), '--check'], {
      cwd: workdir,
      encoding: 'utf8',
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });

  it('passes on the checked-in generated files', () => {
    expect(check().status).toBe(0);
  }, 60_000);

  it('fails once schema.graphql changes without regenerating', () => {
    const schemaFile = path.join(workdir, 'schema.graphql');
    writeFileSync(schemaFile, readFileSync(schemaFile, 'utf8').replace('"Display name."', '"The name to show."'));
    const result = check();
    expect(result.status).toBe(1);
    expect(`${result.stdout}${result.stderr}`).toMatch(/stale/i);
  }, 60_000);
});
