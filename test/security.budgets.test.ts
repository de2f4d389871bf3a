/**
 * Operation budgets, enforced while an operation runs (the meter in the execution step), over
 * every transport and whichever executor the pipeline uses: what the static estimate lets
 * through (a fragment of `__typename` aliases under nested pages) is stopped with
 * BUDGET_EXCEEDED before its answer exists; an ordinary page never meets a budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, executorConfig } from '../src/config/index.js';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { failOnIds } from './support/faults.js';
import { codesOf, startTransportServer, TRANSPORTS } from './support/transports.js';
import type { Outcome, TransportName, TransportServer } from './support/transports.js';

/** `count` aliases of `__typename` in a fragment on Order, spread on `levels` nested pages of alice's orders. */
export function typenameBomb(count: number, levels: number, first = 30): string {
  const fragment = `fragment F on Order { ${Array.from({ length: count }, (_, i) => `a${i}: __typename`).join(' ')} }`;
  let nodes = '...F';
  for (let level = 1; level < levels; level += 1)
    nodes = `...F user { orders(first: ${first}) { nodes { ${nodes} } } }`;
  return `{ user(userId: "alice") { orders(first: ${first}) { nodes { ${nodes} } } } } ${fragment}`;
}

const ORDINARY_PAGE = `{ user(userId: "alice") { userId name orders(first: 20) { totalCount pageInfo { hasNextPage endCursor }
  nodes { __typename orderId status placedAt total { amount currencyCode } items { quantity unitPrice { amount } product { __typename name price { amount } } } } } } }`;

/**
 * A refusal by the meter: its code alone, no data, 400 over HTTP and Lambda (an SSE stream has
 * answered 200 before the operation runs; a WebSocket has no status).
 */
function expectStopped(outcome: Outcome, transport: TransportName, budget: string): void {
  expect(codesOf(outcome)).toEqual(['BUDGET_EXCEEDED']);
  expect(outcome.errors[0]?.extensions?.budget).toBe(budget);
  expect(outcome.data ?? null).toBeNull();
  expect(outcome.status).toBe({ WebSocket: null, SSE: 200, HTTP: 400, Lambda: 400 }[transport]);
}

/** The cost estimate and the selection pre-check out of the way (the alias limit is set per server). */
const DOCUMENT_LIMITS_LIFTED = {
  maxCost: 100_000_000,
  maxSelectionSetFields: 100_000,
  maxRepeatedFieldPairs: 100_000,
  maxSelections: 100_000,
};

let open: TransportServer;
let tight: TransportServer;
/** Reads of a category named after it fail inside DynamoDB's client: `products` (non-null) fails, and nulls `data`. */
const FAILING_CATEGORY = 'budget-failing-category';
/**
 * The entries of the answer to NULLED: its two root fields and the product's two fields (the
 * failing page counts none). Counted twice, the planned executor's run and its re-run on
 * graphql-js would be over this.
 */
const NULLED_ENTRIES = 5;
const NULLED = `{ a: product(productId: "tent-2p") { name description } products(category: "${FAILING_CATEGORY}") { nodes { name } } }`;
let nulling: TransportServer;
beforeAll(async () => {
  [open, tight, nulling] = await Promise.all([
    // Limits of the document out of the way: only the meter stands between a bomb and the answer.
    startTransportServer({ limits: { ...DEFAULT_LIMITS, ...DOCUMENT_LIMITS_LIFTED, maxAliases: 10_000 } }),
    startTransportServer({
      limits: {
        ...DEFAULT_LIMITS,
        ...DOCUMENT_LIMITS_LIFTED,
        maxAliases: 1000,
        maxOperationRequests: 2,
        maxOperationReadUnits: 3,
        maxResultEntries: 400,
        maxResultBytes: 8000,
      },
    }),
    startTransportServer({
      limits: { ...DEFAULT_LIMITS, maxResultEntries: NULLED_ENTRIES },
      configureClient: failOnIds({ leaky: FAILING_CATEGORY }),
      // The planned executor (the default) leaves a run with a failed field to graphql-js, which runs it again.
      executor: executorConfig({ EXECUTOR: 'auto' }),
    }),
  ]);
  await Promise.all(
    [open, tight, nulling].map(({ server }) => putItems(server.dynamo.doc, server.tableName, demoItems())),
  );
});
afterAll(async () => {
  await Promise.all([open?.stop(), tight?.stop(), nulling?.stop()]);
});

describe.each(TRANSPORTS)('the operation meter over %s', (transport) => {
  it.each([
    ['600 aliases on three levels of pages', typenameBomb(600, 3)],
    ['600 aliases on two levels', typenameBomb(600, 2)],
    ['100 aliases on three levels', typenameBomb(100, 3)],
    ['60 aliases on three levels of ten', typenameBomb(60, 3, 10)],
  ])('stops %s with BUDGET_EXCEEDED before the answer exists', async (_, query) => {
    const outcome = await open.send(transport, { query });
    expectStopped(outcome, transport, 'entries');
    expect(outcome.raw.length).toBeLessThan(2000);
  });

  it('answers an ordinary page of orders with their lines and products', async () => {
    const outcome = await open.send(transport, { query: ORDINARY_PAGE });
    expect(outcome.errors).toEqual([]);
    expect(outcome.data).toMatchObject({ user: { userId: 'alice', orders: { totalCount: 30 } } });
  });

  it('counts __typename and every alias of it as entries of the answer', async () => {
    const aliases = (count: number) => Array.from({ length: count }, (_, i) => `t${i}: __typename`).join(' ');
    // The four books with 19 aliases each: 1 + 1 + 4 + 4 x 19 entries, under 400.
    const fits = await tight.send(transport, { query: `{ products(category: "books") { nodes { ${aliases(19)} } } }` });
    expect(fits.errors).toEqual([]);
    // Five products with 90 aliases each: over 400 (and still under the byte budget).
    const over = await tight.send(transport, {
      query: `{ products(category: "electronics") { nodes { ${aliases(90)} } } }`,
    });
    expectStopped(over, transport, 'entries');
  });

  it('stops an operation past its DynamoDB request budget', async () => {
    const outcome = await tight.send(transport, {
      // A batch of reads, then two Queries of orders by status: three requests.
      query: `{ a: product(productId: "tent-2p") { name } alice: user(userId: "alice") { orders(first: 1, status: SHIPPED) { nodes { orderId } } }
        bob: user(userId: "bob") { orders(first: 1, status: PLACED) { nodes { orderId } } } }`,
    });
    expectStopped(outcome, transport, 'requests');
  });

  it('stops an operation past its read capacity budget', async () => {
    const outcome = await tight.send(transport, {
      query: `{ user(userId: "alice") { orders(first: 30) { nodes { items { product { name } } } } } }`,
    });
    expect(codesOf(outcome)).toEqual(['BUDGET_EXCEEDED']);
    expect(['readCapacityUnits', 'entries', 'bytes']).toContain(outcome.errors[0]?.extensions?.budget);
  });

  it('counts an answer in which a non-null field nulled its parent once, whichever executor ran it', async () => {
    // The planned run stops at the failed field, and graphql-js runs the operation again.
    const outcome = await nulling.send(transport, { query: NULLED });
    expect(codesOf(outcome)).toEqual(['INTERNAL_SERVER_ERROR']);
    expect(outcome.data ?? null).toBeNull();
  });

  it('stops an answer whose bytes exceed the budget while it is built', async () => {
    const outcome = await tight.send(transport, {
      // 300 entries, but about 14,000 bytes of descriptions.
      query: `{ products(category: "electronics") { nodes { ${Array.from({ length: 60 }, (_, i) => `d${i}: description`).join(' ')} } } }`,
    });
    expectStopped(outcome, transport, 'bytes');
  });
});
