/**
 * The GraphQL Lambda and the trusted-documents registry: a cold start reads each manifest's
 * index, not its documents, and a request by id reads that one document once; an id nobody
 * trusts costs no read; a retired manifest's documents are refused after the next refresh; a
 * manifest published before manifests had an index is still served. On DynamoDB Local, which
 * reports read units by item size as DynamoDB does.
 */
import { createHash, randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGraphQLLambdaConfig } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { loadActiveDocuments } from '../src/db/documentRegistry.js';
import { publishManifest, retireManifest } from '../src/db/documentRegistryWrites.js';
import type { TrustedDocument } from '../src/db/documentRegistry.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { createGraphQLHandler } from '../src/lambda/graphql.js';
import { demoItems } from '../src/seed/seed.js';
import { appManifestKey, manifestIndexKey } from '../src/table/keys.js';
import { commandLog } from './support/commandLog.js';
import { endpoint, TEST_AUTH, TEST_CURSOR_SECRET } from './support/harness.js';
import { apiGatewayEvent } from './support/transports.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

/** Documents of about 4 kB, as generated clients' documents with their fragments weigh. */
const DOCUMENTS = 120;
const documentOf = (i: number) =>
  `query Shelf${i} { products(category: "books", first: 1) { nodes { name } } }\n# ${'padding '.repeat(500)}`;
const trusted = (text: string, id = sha256(text)): TrustedDocument => ({ id, sha256: sha256(text), document: text });
const RELAY = 'query RelayShelf { products(category: "electronics", first: 1) { nodes { productId } } }';

let dynamo: Dynamo;
let tableName: string;
const registry = () => ({ doc: dynamo.doc, tableName });

beforeAll(async () => {
  tableName = `registry-lambda-${randomUUID()}`;
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  await ensureTable(dynamo.client, tableName, endpoint());
  await putItems(dynamo.doc, tableName, demoItems());
  await publishManifest(
    registry(),
    'shop-web',
    '1.0.0',
    Array.from({ length: DOCUMENTS }, (_, i) => trusted(documentOf(i))),
  );
  await publishManifest(registry(), 'shop-relay', '1.0.0', [trusted(RELAY, md5(RELAY))]);
}, 60_000);
afterAll(async () => {
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
});

/** A freshly started function (a cold start), its DynamoDB calls logged. */
function coldStart() {
  const log = commandLog();
  const own = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  log.attach(own.client);
  const handler = createGraphQLHandler(
    {
      ...loadGraphQLLambdaConfig({ NODE_ENV: 'test', DYNAMODB_ENDPOINT: endpoint(), TABLE_NAME: tableName }),
      logLevel: 'silent',
      cursorSecret: TEST_CURSOR_SECRET,
      auth: TEST_AUTH,
      persistedOnly: true,
      // Every request looks at the registry's head: a retired manifest is seen at once.
      documentsRefreshMs: 1,
    },
    { dynamo: own },
  );
  const send = async (body: Record<string, unknown>) => {
    const result = await handler(apiGatewayEvent(JSON.stringify(body)), {} as Context);
    return JSON.parse(result.body ?? '{}') as { data?: any; errors?: { extensions: { code: string } }[] };
  };
  return { log, send, stop: () => own.client.destroy() };
}

describe("the GraphQL Lambda's cold start", () => {
  it('reads the index of each manifest and the one document asked for, not the registry', async () => {
    const full = commandLog();
    const reader = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
    full.attach(reader.client);
    await loadActiveDocuments({ doc: reader.doc, tableName });
    reader.client.destroy();

    const fn = coldStart();
    const answer = await fn.send({ documentId: `sha256:${sha256(documentOf(7))}` });
    expect(answer.data?.products.nodes).toHaveLength(1);
    // Everything the function read for its first request weighs a fifth of the registry at most.
    expect(fn.log.capacityUnits).toBeLessThan(full.capacityUnits / 5);
    fn.stop();
  });

  it('reads a document once, serves Relay ids, and reads nothing for an id nobody trusts', async () => {
    const fn = coldStart();
    const id = `sha256:${sha256(documentOf(3))}`;
    expect((await fn.send({ documentId: id })).data?.products.nodes).toHaveLength(1);
    fn.log.clear();
    expect((await fn.send({ documentId: id })).data?.products.nodes).toHaveLength(1);
    // The head (the refresh interval is 1 ms here) and the request's own read: no document.
    expect(fn.log.operations).toEqual(['GetItem', 'Query']);

    expect((await fn.send({ doc_id: md5(RELAY) })).data?.products.nodes).toHaveLength(1);

    fn.log.clear();
    const unknown = await fn.send({ documentId: `sha256:${sha256('{ __typename }')}` });
    expect(unknown.errors?.map((error) => error.extensions.code)).toEqual(['PERSISTED_QUERY_REQUIRED']);
    expect(fn.log.operations).toEqual(['GetItem']);
    fn.stop();
  });

  it('refuses a retired manifest’s document after the next refresh, even one it had read', async () => {
    await publishManifest(registry(), 'retiring', '1.0.0', [trusted(documentOf(1000))]);
    const fn = coldStart();
    const id = `sha256:${sha256(documentOf(1000))}`;
    expect((await fn.send({ documentId: id })).data?.products.nodes).toHaveLength(1);
    await retireManifest(registry(), 'retiring', '1.0.0');
    const refused = await fn.send({ documentId: id });
    expect(refused.errors?.map((error) => error.extensions.code)).toEqual(['PERSISTED_QUERY_REQUIRED']);
    fn.stop();
  });

  it('serves a manifest published before manifests had an index, by reading it whole', async () => {
    const old = trusted(documentOf(2000));
    const record = await publishManifest(registry(), 'before-index', '1.0.0', [old]);
    // As a manifest published by an earlier release: no index items, no count of them.
    await dynamo.doc.send(
      new DeleteCommand({ TableName: tableName, Key: manifestIndexKey('before-index', '1.0.0', record.contentId, 0) }),
    );
    await dynamo.doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: appManifestKey('before-index', '1.0.0'),
        UpdateExpression: 'REMOVE indexParts',
      }),
    );
    const fn = coldStart();
    expect((await fn.send({ documentId: `sha256:${old.sha256}` })).data?.products.nodes).toHaveLength(1);
    fn.stop();
  });
});
