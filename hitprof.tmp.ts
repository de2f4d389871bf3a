import { randomUUID } from 'node:crypto';
import { createDynamo } from './src/db/client.js';
import { ensureTable } from './src/db/ensureTable.js';
import { startLocalDynamo } from './src/db/local.js';
import { spawn } from 'node:child_process';
import { aProduct, store } from './test/support/factories.js';
import { percentile } from './test/support/load.js';

const Q = `query CategoryPage($category: String!) {
  products(category: $category, first: 20) {
    pageInfo { hasNextPage endCursor }
    edges { cursor node { id productId name price { amount currencyCode } stock description } }
  }
}`;
const local = await startLocalDynamo();
const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
const tableName = `prof-${randomUUID()}`;
await ensureTable(dynamo.client, tableName, local.endpoint);
const products = Array.from({ length: 10 }, (_, i) => aProduct({ category: 'c0', stock: 100, priceCents: 1000 + i }));
await store(dynamo.doc, tableName, { products });
const port = 40000 + Math.floor(Math.random() * 1000);
const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, DYNAMODB_ENDPOINT: local.endpoint, TABLE_NAME: tableName, HOST: '127.0.0.1', PORT: String(port), SEED_DEMO_DATA: 'false', LOG_LEVEL: 'warn', JWT_SECRET: 'x'.repeat(40), PLAYGROUND: 'false', NODE_ENV: 'development' }, stdio: 'inherit' });
const s = { url: `http://127.0.0.1:${port}/graphql`, origin: `http://127.0.0.1:${port}` };
for (;;) { try { if ((await fetch(`${s.origin}/readyz`)).ok) break; } catch {} await new Promise((r) => setTimeout(r, 200)); }
const body = JSON.stringify({ operationName: 'CategoryPage', query: Q, variables: { category: 'c0' } });
const ask = async () => { const t = performance.now(); const r = await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/json', ...(process.env.IDENT ? { 'accept-encoding': 'identity' } : {}) }, body }); const j = await r.json() as any; return [performance.now() - t, j.extensions?.cost?.dynamodb?.requests]; };
for (let i = 0; i < 200; i++) await ask();
const health = async () => { const t = performance.now(); await (await fetch(`${s.origin}/healthz`)).text(); return performance.now() - t; };
const ms: number[] = []; const hs: number[] = [];
for (let i = 0; i < Number(process.env.N ?? 1500); i++) { const [m] = await ask(); ms.push(m as number); if (i % 3 === 0) hs.push(await health()); }
console.log('hit p50', percentile(ms, 50).toFixed(2), 'healthz p50', percentile(hs, 50).toFixed(2), 'last requests', (await ask())[1]);
child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r));
dynamo.client.destroy();
await local.stop();
process.exit(0);
