/**
 * The loads of `npm run bench:memory` (memoryGrowth.ts): each hands the i-th request's headers
 * and body. `steady` is the benchmark's own operations, as `npm run bench` sends them; the
 * others vary what a client may vary, as a careless or hostile client would.
 */
import { signToken } from '../src/auth/tokens.js';
import { seededRandom } from '../src/seed/seededRandom.js';
import type { Dataset } from './dataset.js';
import { operations } from './operations.js';
import { JWT_SECRET } from './systems.js';

export const LOAD_NAMES = ['steady', 'distinct', 'undeclared'] as const;
export type LoadName = (typeof LOAD_NAMES)[number];

export const LOAD_TITLES: Record<LoadName, string> = {
  steady: "the bench's operations (7 documents, their variables streams, one admin token)",
  distinct:
    'a new document, operation name, page size, token (of 20,000 customers), Accept header and request id on every request',
  undeclared: 'one of 1,000 documents, each request with an undeclared variable holding 4,000 random characters',
};

export interface LoadRequest {
  headers: Record<string, string>;
  body: string;
}

export type Load = (i: number) => LoadRequest;

const AUTH = { secret: JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' };
const JSON_HEADERS = { 'content-type': 'application/json' };

/** `n` random characters from `random`. */
function text(random: () => number, n: number): string {
  let out = '';
  for (let k = 0; k < n; k++) out += String.fromCharCode(97 + Math.floor(random() * 26));
  return out;
}

export async function buildLoad(name: LoadName, data: Dataset, runId: string): Promise<Load> {
  const random = seededRandom(7);
  if (name === 'steady') {
    const admin = await signToken({ userId: 'bench-admin', role: 'admin' }, AUTH);
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${admin}` };
    const ops = operations(data, runId).map((op, k) => ({ op, next: op.variables(1000 * (k + 1), 'memory') }));
    return (i) => {
      const { op, next } = ops[i % ops.length] as (typeof ops)[number];
      return {
        headers,
        body: JSON.stringify({ operationName: op.operationName, query: op.query, variables: next() }),
      };
    };
  }
  if (name === 'distinct') {
    const tokens: string[] = [];
    for (let k = 0; k < 20_000; k++) tokens.push(await signToken({ userId: `m-${k}`, role: 'customer' }, AUTH));
    const categories = data.categories;
    return (i) => {
      const operationName = `Page${i}`;
      const query =
        i % 2 === 0
          ? `query ${operationName}($category: String!, $first: Int) { products(category: $category, first: $first) { nodes { productId name price { amount } } } }`
          : `query ${operationName}($first: Int) { viewer { userId orders(first: $first) { nodes { orderId } } } }`;
      return {
        headers: {
          ...JSON_HEADERS,
          authorization: `Bearer ${tokens[i % tokens.length] as string}`,
          accept: `application/graphql-response+json, application/json;q=0.${(i % 9) + 1}, text/x-${i}`,
          'x-request-id': `memory-${i}`,
        },
        body: JSON.stringify({
          operationName,
          query,
          variables: { category: categories[i % categories.length], first: 1 + Math.floor(random() * 100) },
        }),
      };
    };
  }
  return (i) => ({
    headers: JSON_HEADERS,
    body: JSON.stringify({
      operationName: `Ping${i % 1000}`,
      query: `query Ping${i % 1000} { __typename }`,
      variables: { note: text(random, 4000) },
    }),
  });
}
