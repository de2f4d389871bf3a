import { it } from 'vitest';
import { startTestServer } from './support/harness.js';

it('probe', async () => {
  const s = await startTestServer();
  for (const n of [10, 15, 18, 20]) {
    const frags = Array.from({ length: n }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ');
    const q = `{ ...F0 } ${frags} fragment F${n} on Query { product(productId: "x") { name } }`;
    const t = Date.now();
    const r = await s.gql(q);
    console.log(n, Date.now() - t, q.length, JSON.stringify(r).slice(0, 300));
  }
  // fan-out with distinct fields
  for (const n of [10, 16, 20]) {
    const frags = Array.from({ length: n }, (_, i) => `fragment F${i} on Product { ...F${i + 1} ...G${i + 1} }`).join(' ');
    const gs = Array.from({ length: n + 1 }, (_, i) => `fragment G${i} on Product { ...F${i}  }`);
    void gs;
    const q2 = `{ product(productId:"x") { ...F0 } } ${Array.from({ length: n }, (_, i) => `fragment F${i} on Product { name ...F${i + 1} ...F${i + 1} }`).join(' ')} fragment F${n} on Product { name }`;
    const t = Date.now();
    const r = await s.gql(q2);
    console.log('b', n, Date.now() - t, JSON.stringify(r).slice(0, 300));
    void frags;
  }
  await s.stop();
});
