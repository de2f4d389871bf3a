/**
 * `npm run bench:registry`: what a GraphQL Lambda cold start reads of the trusted-documents
 * registry, against the registry's size. For each size, a fresh table on DynamoDB Local (in
 * memory, which reports read units by item size as DynamoDB does) gets that many documents in 13
 * app manifests, the documents as large as the registry's bound (8 MiB) allows, at most 7.2 kB
 * each. Then:
 *
 * - the full load a server makes at each reload (every manifest's documents): requests, read
 *   units, milliseconds;
 * - a Lambda cold start: the handler built, then its first request, a document by id: every
 *   DynamoDB request the function made until it answered, their read units and the time.
 *
 *   npm run bench:registry
 *   npm run bench:registry -- --sizes 100,1106
 */
import { parseCommandLine } from '../src/cli.js';
import { createHash } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { loadGraphQLLambdaConfig } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { createDynamo } from '../src/db/client.js';
import { loadActiveDocuments, REGISTRY_BOUNDS } from '../src/db/documentRegistry.js';
import { publishManifest } from '../src/db/documentRegistryWrites.js';
import type { TrustedDocument } from '../src/db/documentRegistry.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import { createGraphQLHandler } from '../src/lambda/graphql.js';
import { demoItems } from '../src/seed/seed.js';
import { commandLog } from '../test/support/commandLog.js';
import { apiGatewayEvent } from '../test/support/apiGatewayEvents.js';
import { BENCH_AUTH } from './benchServer.js';

const { values } = parseCommandLine({
  name: 'bench:registry',
  run: 'npm run bench:registry --',
  usage: `[--sizes <n,n,...>]

What a GraphQL Lambda's cold start reads of the trusted-documents registry, against a full load,
for registries of each size.

  --sizes <list>   registry sizes in documents, comma-separated (default 100,1106,5000)`,
  options: { sizes: { type: 'string', default: '100,1106,5000' } },
});
const sizes = values.sizes.split(',').map(Number);
const MANIFESTS = 13;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const local = await startLocalDynamo();
const logged = () => {
  const log = commandLog();
  const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
  log.attach(dynamo.client);
  return { log, dynamo };
};

console.log(`node ${process.version}; DynamoDB Local in memory; ${MANIFESTS} manifests`);
console.log(
  '| documents | registry MB | full load: requests | read units | ms | Lambda cold start: requests | read units | ms to the first answer |',
);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const size of sizes) {
  const tableName = `BenchRegistry${size}`;
  const admin = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
  await ensureTable(admin.client, tableName, local.endpoint);
  await putItems(admin.doc, tableName, demoItems());
  const bytes = Math.min(7200, Math.floor((REGISTRY_BOUNDS.maxBytes * 0.95) / size));
  const documents: TrustedDocument[] = Array.from({ length: size }, (_, i) => {
    const head = `query Shelf${i} { products(category: "books", first: 1) { nodes { name } } }\n# `;
    const text = head + 'x'.repeat(Math.max(0, bytes - head.length));
    return { id: sha256(text), sha256: sha256(text), document: text };
  });
  for (let manifest = 0; manifest < MANIFESTS; manifest++) {
    const share = documents.filter((_, i) => i % MANIFESTS === manifest);
    if (share.length > 0) await publishManifest({ doc: admin.doc, tableName }, `app-${manifest}`, '1.0.0', share);
  }

  const full = logged();
  let started = performance.now();
  await loadActiveDocuments({ doc: full.dynamo.doc, tableName });
  const fullMs = performance.now() - started;
  full.dynamo.client.destroy();

  const cold = logged();
  started = performance.now();
  const handler = createGraphQLHandler(
    {
      ...loadGraphQLLambdaConfig({ NODE_ENV: 'test', DYNAMODB_ENDPOINT: local.endpoint, TABLE_NAME: tableName }),
      logLevel: 'silent',
      cursorSecret: 'bench-cursor-secret',
      auth: BENCH_AUTH,
      persistedOnly: true,
    },
    { dynamo: cold.dynamo },
  );
  const wanted = documents[Math.floor(size / 2)] as TrustedDocument;
  const result = await handler(
    apiGatewayEvent(JSON.stringify({ documentId: `sha256:${wanted.sha256}` }), {}, 'bench'),
    {} as Context,
  );
  const coldMs = performance.now() - started;
  if (!(result.body ?? '').includes('"products"')) throw new Error(`the Lambda did not answer: ${result.body}`);
  cold.dynamo.client.destroy();
  admin.client.destroy();
  const mb = (size * bytes) / 2 ** 20;
  console.log(
    `| ${size} | ${mb.toFixed(1)} | ${full.log.operations.length} | ${full.log.capacityUnits.toFixed(1)} | ${fullMs.toFixed(0)} | ${cold.log.operations.length} | ${cold.log.capacityUnits.toFixed(1)} | ${coldMs.toFixed(0)} |`,
  );
}
await local.stop();
