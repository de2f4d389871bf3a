/**
 * "The limit": the raw chain's operations (rawOperations.ts: each operation's data fetched by the
 * minimal chain of raw SDK calls, with no GraphQL) behind a tiny node:http server, so that it is
 * measured over HTTP exactly like the others. It accepts the same request bodies (dispatching on
 * operationName) and answers with the same JSON shape, including extensions.cost.dynamodb. The
 * URL's `?plan=` chooses the request plan (`min`, the default; `levels`; `projected`).
 *
 * Run: node --import tsx bench/rawChain.ts with DYNAMODB_ENDPOINT, TABLE_NAME, PORT.
 */
import http from 'node:http';
import { costed } from '../src/db/client.js';
import { announceReady, childEnv, costExtension, createMeteredDoc, newMeter, stopOnSignals } from './childSupport.js';
import { rawOperations } from './rawOperations.js';
import type { RawPlan } from './rawOperations.js';

type Json = Record<string, unknown>;

const env = childEnv();
const { client, doc } = createMeteredDoc(env);
const execute = rawOperations(env.tableName);

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const meter = newMeter();
    const planParam = new URL(req.url ?? '/', 'http://x').searchParams.get('plan');
    const plan: RawPlan = planParam === 'levels' || planParam === 'projected' ? planParam : 'min';
    void (async () => {
      let status = 200;
      let body: Json;
      try {
        const { operationName, variables } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          operationName: string;
          variables?: Json;
        };
        body = {
          data: await execute(costed(doc, meter), operationName, variables ?? {}, plan),
          extensions: costExtension(meter),
        };
      } catch (error) {
        status = 500;
        body = { errors: [{ message: error instanceof Error ? error.message : String(error) }] };
      }
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    })();
  });
});

server.listen(env.port, '127.0.0.1', () => announceReady(server, 'raw chain'));
stopOnSignals(server, client);
