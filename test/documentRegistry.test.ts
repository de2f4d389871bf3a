/**
 * The trusted-documents registry on DynamoDB Local: an external app's manifest published with
 * `npm run documents` is served under PERSISTED_ONLY by a running server, without a restart, by
 * every client's way of naming a document; retiring it withdraws it; the bounds hold.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../src/db/batchWrite.js';
import { listManifests, readRegistryHead, REGISTRY_BOUNDS } from '../src/db/documentRegistry.js';
import { publishManifest, retireManifest } from '../src/db/documentRegistryWrites.js';
import { readManifest } from '../src/pipeline/documents/manifestFormats.js';
import { loadPersistedDocuments } from '../src/pipeline/documents/persistedDocuments.js';
import { demoItems } from '../src/seed/seed.js';
import { DOCUMENT_REGISTRY_HEAD_KEY } from '../src/table/keys.js';
import { endpoint, errorCodes, startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';
import { runNode } from './support/serverProcess.js';
import { waitUntil } from './support/waitUntil.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

const EXTERNAL = 'query ExternalShelf { products(category: "books", first: 2) { nodes { name } } }';
const RELAY = 'query RelayShelf { products(category: "electronics", first: 1) { nodes { productId } } }';

/** How long a published manifest may take to reach a running instance (the target: 10 s). */
const PICK_UP_BOUND_MS = 10_000;

let server: TestServer;
let workdir: string;
beforeAll(async () => {
  server = await startTestServer({ persistedOnly: true, documentsRefreshMs: 250, playground: false });
  await putItems(server.dynamo.doc, server.tableName, demoItems());
  workdir = mkdtempSync(path.join(tmpdir(), 'manifests-'));
});
afterAll(async () => {
  await server?.stop();
  rmSync(workdir, { recursive: true, force: true });
});

const registry = () => ({ doc: server.dynamo.doc, tableName: server.tableName });

const post = async (body: Record<string, unknown>) => {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, ...((await response.json()) as { data?: any; errors?: any[] }) };
};

/** Polls until `ready` holds or the bound passes: how long a change took to be served. */
async function servedWithin(ready: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  await waitUntil(ready, { timeoutMs: PICK_UP_BOUND_MS, intervalMs: 50, what: 'the change to be served' });
  return Date.now() - started;
}

const documentsCli = (args: string[]) =>
  runNode(
    'scripts/documents.ts',
    { DYNAMODB_ENDPOINT: endpoint(), TABLE_NAME: server.tableName, NODE_ENV: 'test' },
    args,
  );

describe('an external app manifest', () => {
  it('is refused under PERSISTED_ONLY until published, then served by documentId without a restart', async () => {
    const before = await post({ documentId: `sha256:${sha256(EXTERNAL)}` });
    expect(errorCodes(before as any)).toEqual(['PERSISTED_QUERY_REQUIRED']);
    expect(errorCodes((await post({ query: EXTERNAL })) as any)).toEqual(['PERSISTED_QUERY_REQUIRED']);

    const file = path.join(workdir, 'apollo-manifest.json');
    writeFileSync(
      file,
      JSON.stringify({
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [{ id: sha256(EXTERNAL), name: 'ExternalShelf', type: 'query', body: EXTERNAL }],
      }),
    );
    const cli = documentsCli(['publish', '--app', 'shop-web', '--version', '1.4.0', file]);
    const exit = await cli.exited;
    expect(cli.stderr()).not.toMatch(/documents:/);
    expect(exit.code).toBe(0);
    expect(cli.stdout()).toContain('published shop-web@1.4.0: 1 documents');

    const tookMs = await servedWithin(async () => (await post({ documentId: `sha256:${sha256(EXTERNAL)}` })).data);
    expect(tookMs).toBeLessThan(PICK_UP_BOUND_MS);
    const byId = await post({ documentId: `sha256:${sha256(EXTERNAL)}` });
    expect(byId.data.products.nodes).toHaveLength(2);
    // Apollo's extension and the full text name the same trusted document.
    const byHash = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(EXTERNAL) } } });
    expect(byHash.data).toEqual(byId.data);
    expect((await post({ query: EXTERNAL })).data).toEqual(byId.data);
  }, 60_000);

  it("serves Relay's doc_id (an md5) and is withdrawn everywhere once retired", async () => {
    const relay = readManifest({ [md5(RELAY)]: RELAY });
    expect(relay.format).toBe('relay');
    await publishManifest(registry(), 'shop-relay', '2.0.0', relay.documents);
    await servedWithin(async () => (await post({ doc_id: md5(RELAY), variables: {} })).data !== undefined);
    expect((await post({ doc_id: md5(RELAY) })).data.products.nodes).toHaveLength(1);

    await retireManifest(registry(), 'shop-relay', '2.0.0');
    await servedWithin(async () => errorCodes(await post({ doc_id: md5(RELAY) }))[0] !== undefined);
    expect(errorCodes((await post({ query: RELAY })) as any)).toEqual(['PERSISTED_QUERY_REQUIRED']);
    const listed = await listManifests(registry());
    expect(listed.find((record) => record.app === 'shop-relay')).toMatchObject({ status: 'retired', documentCount: 1 });
  }, 30_000);
});

describe('the registry bounds and rules', () => {
  it('refuses a second publish of the same version, changing nothing', async () => {
    const documents = readManifest({ [`sha256:${sha256('{ __typename }')}`]: '{ __typename }' }).documents;
    await publishManifest(registry(), 'pinned', '1.0.0', documents);
    const head = await readRegistryHead(registry());
    await expect(publishManifest(registry(), 'pinned', '1.0.0', documents)).rejects.toMatchObject({
      code: 'MANIFEST_EXISTS',
    });
    expect(await readRegistryHead(registry())).toEqual(head);
  });

  it('refuses a manifest that would take the registry past its bound, changing nothing', async () => {
    const head = await readRegistryHead(registry());
    // The registry nearly full: one more document fits, two do not.
    await server.dynamo.doc.send(
      new PutCommand({
        TableName: server.tableName,
        Item: { ...DOCUMENT_REGISTRY_HEAD_KEY, ...head, documentCount: REGISTRY_BOUNDS.maxDocuments - 1 },
      }),
    );
    const two = readManifest({
      [sha256('query A { __typename }')]: 'query A { __typename }',
      [sha256('query B { __typename }')]: 'query B { __typename }',
    }).documents;
    await expect(publishManifest(registry(), 'too-big', '1.0.0', two)).rejects.toMatchObject({ code: 'REGISTRY_FULL' });
    expect((await listManifests(registry())).some((record) => record.app === 'too-big')).toBe(false);
    expect((await readRegistryHead(registry())).documentCount).toBe(REGISTRY_BOUNDS.maxDocuments - 1);
    await server.dynamo.doc.send(
      new PutCommand({ TableName: server.tableName, Item: { ...DOCUMENT_REGISTRY_HEAD_KEY, ...head } }),
    );
  });

  it('check refuses a manifest with a document the schema does not know, and publishes nothing', async () => {
    const bad = 'query Broken { products(category: "books") { nodes { colour } } }';
    const file = path.join(workdir, 'persisted-documents.json');
    writeFileSync(file, JSON.stringify({ [`sha256:${sha256(bad)}`]: bad }));
    const cli = documentsCli(['check', file]);
    expect((await cli.exited).code).toBe(1);
    expect(cli.stderr()).toMatch(/1 invalid document\(s\):\n.*Cannot query field "colour" on type "Product"/);
    const publish = documentsCli(['publish', '--app', 'broken', '--version', '1.0.0', file]);
    expect((await publish.exited).code).toBe(1);
    expect((await listManifests(registry())).some((record) => record.app === 'broken')).toBe(false);
  }, 60_000);
});

describe('GET without a preflight header (CSRF)', () => {
  const get = (params: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${server.url}?${new URLSearchParams(params).toString()}`, { headers });

  // The server's own manifest is trusted like a published one.
  const [categoryHash, categoryPage] = [...loadPersistedDocuments()].find(([, text]) => text.includes('CategoryPage'))!;

  it('is admitted for a trusted query, by text or by documentId', async () => {
    const byText = await get({ query: categoryPage, variables: JSON.stringify({ category: 'books', first: 2 }) });
    const body = (await byText.json()) as any;
    expect(body.errors).toBeUndefined();
    expect(byText.status).toBe(200);
    expect(body.data.products.nodes).toHaveLength(2);
    const byId = await get({ documentId: `sha256:${categoryHash}`, variables: JSON.stringify({ category: 'books' }) });
    expect(byId.status).toBe(200);
    expect(((await byId.json()) as any).data.products.nodes.length).toBeGreaterThan(0);
  });

  it('is refused, with cookies, for a document that is not trusted', async () => {
    const query = '{ products(category: "books", first: 1) { nodes { name } } }';
    const response = await get({ query }, { cookie: 'session=1' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0].message).toMatch(/Cross-Site Request Forgery/);
    const trusted = await get(
      { query: categoryPage, variables: JSON.stringify({ category: 'books', first: 2 }) },
      {
        cookie: 'session=1',
      },
    );
    expect(trusted.status).toBe(200);
  });
});
