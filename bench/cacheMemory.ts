/**
 * `npm run bench:cache-memory`: what the response cache's entries take in the heap, against what
 * its bound counts (RESPONSE_CACHE_MAX_BYTES, src/pipeline/responseCache/entryStore.ts). A flood
 * of distinct answers shaped like the API's (pages of 20 products, single products, a user's
 * orders; some with non-ASCII names) goes into one store until it has evicted as much again as
 * it holds; the heap is measured after a full GC before and after. Also measured, for the record:
 * the same answers kept as parsed objects (what an entry held before it held its JSON text).
 *
 * Prints the heap growth per counted byte and exits 1 when the heap grew more than the count
 * (the bound would not hold). CACHE_MEMORY_MAX_BYTES sizes the store (default 64 MiB).
 * Run with --expose-gc (the npm script does).
 */
import { createHash } from 'node:crypto';
import { EntryStore } from '../src/pipeline/responseCache/entryStore.js';
import { seededRandom } from '../src/seed/seededRandom.js';

const maxBytes = Number(process.env.CACHE_MEMORY_MAX_BYTES ?? 64 * 1024 * 1024);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const random = seededRandom(4);
const word = (n: number) =>
  Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join('');
const accents = ['é', 'ü', 'ñ', 'ø', '😀'];

/** One answer as the API gives it, with its tags: a category page, a product, or a user's orders. */
function anAnswer(i: number): { data: unknown; tags: string[] } {
  const wide = i % 7 === 0;
  const name = () => `${word(8)} ${word(6)}${wide ? (accents[i % accents.length] as string) : ''}`;
  const product = (id: string) => ({
    productId: id,
    name: name(),
    description: `${word(40)} ${word(30)}`,
    stock: Math.floor(random() * 100),
    price: { amount: `${Math.floor(random() * 100)}.99`, currencyCode: 'EUR' },
  });
  switch (i % 3) {
    case 0: {
      const ids = Array.from({ length: 20 }, (_, k) => `p-${i}-${k}`);
      return {
        data: { products: { nodes: ids.map(product), pageInfo: { hasNextPage: true, endCursor: word(60) } } },
        tags: [`category:c${i % 50}`, ...ids.map((id) => `product:${id}`)],
      };
    }
    case 1:
      return { data: { product: product(`p-${i}`) }, tags: [`product:p-${i}`] };
    default: {
      const orders = Array.from({ length: 5 }, (_, k) => ({
        orderId: `o-${i}-${k}`,
        status: 'PLACED',
        total: { amount: '19.99', currencyCode: 'EUR' },
      }));
      return {
        data: { user: { userId: `u-${i}`, name: name(), orders: { nodes: orders } } },
        tags: [`user:u-${i}`, `user-orders:u-${i}`, ...orders.map((o) => `order:${o.orderId}`)],
      };
    }
  }
}

const keyOf = (i: number) => createHash('sha256').update(`key ${i}`).digest('base64url');

function heapAfterGc(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** Fills a store until it has evicted as many entries as it holds; returns the heap growth and the count. */
function flood(): { heap: number; counted: number; entries: number; jsonBytes: number } {
  const before = heapAfterGc();
  const store = new EntryStore({ maxBytes, maxAgeMs: 300_000, holdDownMs: 0 });
  let i = 0;
  let jsonBytes = 0;
  for (let evictedAll = false; !evictedAll; i++) {
    const { data, tags } = anAnswer(i);
    const json = JSON.stringify(data);
    store.set(
      keyOf(i),
      { json, tags, public: true, etag: `W/"${keyOf(-i).slice(0, 27)}"`, readAt: performance.now() },
      false,
    );
    evictedAll = i > 2 * store.size && store.bytes > maxBytes * 0.9;
  }
  const heap = heapAfterGc() - before;
  for (let k = i - store.size; k < i; k++) jsonBytes += Buffer.byteLength(JSON.stringify(anAnswer(k).data));
  const result = { heap, counted: store.bytes, entries: store.size, jsonBytes };
  // Keep the store alive until measured.
  if (store.size < 0) console.info(store);
  return result;
}

/** The same number of answers kept as objects (as entries were before), for comparison. */
function asObjects(entries: number): { heap: number; jsonBytes: number } {
  const before = heapAfterGc();
  const held = new Map<string, { data: unknown; tags: string[] }>();
  let jsonBytes = 0;
  for (let i = 0; i < entries; i++) {
    const answer = anAnswer(i);
    jsonBytes += Buffer.byteLength(JSON.stringify(answer.data));
    held.set(keyOf(i), answer);
  }
  const heap = heapAfterGc() - before;
  if (held.size < 0) console.info(held);
  return { heap, jsonBytes };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const measured = flood();
const objects = asObjects(measured.entries);
console.info(
  [
    `response cache memory, a flood into RESPONSE_CACHE_MAX_BYTES ${mb(maxBytes)}:`,
    `  entries held ${measured.entries}, their JSON ${mb(measured.jsonBytes)}, counted ${mb(measured.counted)}`,
    `  heap growth ${mb(measured.heap)}: ${(measured.heap / measured.counted).toFixed(2)} bytes per counted byte`,
    `  the same answers as objects: heap ${mb(objects.heap)}, ${(objects.heap / objects.jsonBytes).toFixed(2)} bytes per byte of JSON`,
  ].join('\n'),
);
process.exit(measured.heap <= measured.counted ? 0 : 1);
