/**
 * `npm run bench:compression`: the CPU the `compression` middleware spends per answer, at its
 * settings (gzip level 6, brotli quality 4, answers over 1 kB), for answers of the sizes the API
 * sends: an introspection result, a page of 20 products, a page of 20 orders. Prints CPU time
 * per answer and the bytes saved; no server or database needed.
 */
import { constants, brotliCompressSync, gzipSync } from 'node:zlib';
import { introspectionFromSchema } from 'graphql';
import { parseCommandLine } from '../src/cli.js';
import { buildSchema } from '../src/pipeline/schema/schema.js';
import { demoItems } from '../src/seed/seed.js';

parseCommandLine({
  name: 'bench:compression',
  run: 'npm run bench:compression --',
  usage: `

The CPU the response compression spends per answer (gzip level 6, brotli quality 4), for answers of
the sizes the API sends, and the bytes it saves. Needs no server or database; takes no flags.`,
});

const items = demoItems();
const answer = (data: unknown) =>
  JSON.stringify({
    data,
    extensions: { cost: { dynamodb: { requests: 1, readCapacityUnits: 1.5, writeCapacityUnits: 0 } } },
  });
const products = items.filter((item) => item.entityType === 'Product').slice(0, 20);
const orders = items.filter((item) => item.entityType === 'Order').slice(0, 20);
const bodies: [string, string][] = [
  ['introspection', answer(introspectionFromSchema(buildSchema()))],
  ['20 products', answer({ products: { nodes: products } })],
  ['20 orders', answer({ user: { orders: { edges: orders.map((node) => ({ cursor: 'x'.repeat(80), node })) } } })],
];

const codecs: [string, (body: Buffer) => Buffer][] = [
  ['gzip', (body) => gzipSync(body)],
  ['br', (body) => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } })],
];

console.log('| answer | bytes | codec | compressed bytes | CPU per answer |');
console.log('| --- | ---: | --- | ---: | ---: |');
for (const [name, text] of bodies) {
  const body = Buffer.from(text);
  for (const [codec, compress] of codecs) {
    for (let i = 0; i < 50; i += 1) compress(body); // warm-up
    const rounds = Math.max(200, Math.round(2e7 / body.length));
    const start = process.cpuUsage();
    let size = 0;
    for (let i = 0; i < rounds; i += 1) size = compress(body).length;
    const used = process.cpuUsage(start);
    const micros = (used.user + used.system) / rounds;
    console.log(`| ${name} | ${body.length} | ${codec} | ${size} | ${micros.toFixed(0)} µs |`);
  }
}
