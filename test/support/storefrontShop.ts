/**
 * The storefront's test shop: the example built with Vite and served statically from its own
 * origin, in front of a server that runs only trusted documents (the storefront's manifest and a
 * back office's, published) and signs in the demo users with short tokens. The demo data, a
 * customer without orders (carol) and a sold-out product (bivy-sack) are in its table.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'vite';
import { putItems } from '../../src/db/batchWrite.js';
import { publishManifest } from '../../src/db/documentRegistryWrites.js';
import { readManifest } from '../../src/pipeline/documents/manifestFormats.js';
import { demoCategoryItems, demoItems } from '../../src/seed/seed.js';
import { serveStatic } from './browserPage.js';
import { aUser, store } from './factories.js';
import { startTestServer, TEST_AUTH } from './harness.js';
import type { TestServer } from './harness.js';
import { waitUntil } from './waitUntil.js';

export const STOREFRONT = path.join(import.meta.dirname, '..', '..', 'examples', 'storefront');

/** The back office's own documents (another app than the storefront), published beside it. */
export const BACK_OFFICE = {
  ship: 'mutation Ship($input: UpdateOrderStatusInput!) { updateOrderStatus(input: $input) { userErrors { code } } }',
  addProduct:
    'mutation AddProduct($input: CreateProductInput!) { createProduct(input: $input) { userErrors { code } } }',
  orderCount: 'query OrderCount($userId: ID!) { user(userId: $userId) { orders { totalCount } } }',
};

export interface StorefrontShop {
  server: TestServer;
  /** Where the built storefront is served, e.g. http://127.0.0.1:41234 */
  siteUrl: string;
  stop(): Promise<void>;
}

export async function startStorefrontShop({ tokenSeconds }: { tokenSeconds: number }): Promise<StorefrontShop> {
  const outDir = await mkdtemp(path.join(tmpdir(), 'storefront-'));
  const site = await serveStatic(outDir);
  const server = await startTestServer({
    streams: true,
    persistedOnly: true,
    documentsRefreshMs: 250,
    playground: false,
    cors: { origins: [site.url], allowLocalhost: false },
    devSignIn: { users: ['alice', 'bob', 'carol'], auth: TEST_AUTH, tokenSeconds },
  });
  await putItems(server.dynamo.doc, server.tableName, [...demoItems(), ...demoCategoryItems()]);
  await store(server.dynamo.doc, server.tableName, { users: [aUser({ userId: 'carol', name: 'Carol' })] });
  const registry = { doc: server.dynamo.doc, tableName: server.tableName };
  const manifest = JSON.parse(readFileSync(path.join(STOREFRONT, 'src', 'gql', 'persisted-documents.json'), 'utf8'));
  await publishManifest(registry, 'storefront', '0.2.0', readManifest(manifest).documents);
  const backOffice = Object.fromEntries(
    Object.values(BACK_OFFICE).map((text) => [`sha256:${createHash('sha256').update(text).digest('hex')}`, text]),
  );
  await publishManifest(registry, 'back-office', '1.0.0', readManifest(backOffice).documents);
  // Published documents are trusted within DOCUMENTS_REFRESH_MS (250 ms here).
  const bivySack = {
    productId: 'bivy-sack',
    name: 'Bivy Sack',
    description: 'Ultralight, sold out until spring.',
    category: 'outdoors',
    price: '89.00',
    stock: 0,
  };
  const refused = await waitUntil(
    async () => (await server.gql(BACK_OFFICE.addProduct, { input: bivySack })).data?.createProduct.userErrors,
    { timeoutMs: 10_000, what: 'the back office documents to be trusted' },
  );
  if (refused.length > 0) throw new Error(`the sold-out product was refused: ${JSON.stringify(refused)}`);
  await build({
    configFile: path.join(STOREFRONT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
    define: { 'import.meta.env.VITE_GRAPHQL_URL': JSON.stringify(server.url) },
  });
  return {
    server,
    siteUrl: site.url,
    async stop() {
      await server.stop();
      await new Promise((resolve) => site.server.close(resolve));
      await rm(outDir, { recursive: true, force: true });
    },
  };
}
