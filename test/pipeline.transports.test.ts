/**
 * One pipeline under every transport: the same request is refused (or answered) the same way
 * over HTTP, over a WebSocket, over Server-Sent Events and through the Lambda handler: limits, masking, production
 * settings and persisted-only mode are one policy each, not one per transport.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../src/config/index.js';
import { loadPersistedDocuments } from '../src/pipeline/documents/persistedDocuments.js';
import { demoItems } from '../src/seed/seed.js';
import { putItems } from '../src/db/batchWrite.js';
import { failOnIds } from './support/faults.js';
import { codesOf, startTransportServer, TRANSPORTS } from './support/transports.js';
import type { Outcome, TransportName, TransportServer, WireRequest } from './support/transports.js';

/** A product read for this id fails inside the server's DynamoDB client with an AWS-like message. */
const LEAKY_ID = 'leaky-product';

let production: TransportServer;
let locked: TransportServer;
beforeAll(async () => {
  [production, locked] = await Promise.all([
    startTransportServer({ introspection: false, configureClient: failOnIds({ leaky: LEAKY_ID }) }),
    startTransportServer({ introspection: false, persistedOnly: true }),
  ]);
  await Promise.all(
    [production, locked].map(({ server }) => putItems(server.dynamo.doc, server.tableName, demoItems())),
  );
});
afterAll(async () => {
  await Promise.all([production?.stop(), locked?.stop()]);
});

/** About 100 x 100 orders with their lines: refused by the cost limit before anything runs. */
const COST_BOMB = `{ user(userId: "alice") { orders(first: 100) { nodes { orderId user {
  orders(first: 100) { nodes { orderId total { amount } items { productId } } } } } } } }`;
const TOKEN_BOMB = `{ ${'__typename '.repeat(DEFAULT_LIMITS.maxTokens + 500)} }`;
/** A 7.3 kB document under the token limit whose validation alone cost hundreds of milliseconds. */
const VALIDATION_BOMB = `{ ${'viewer { userId } '.repeat(490)}}`;
const OVERSIZED = { query: '{ __typename }', variables: { padding: 'x'.repeat(DEFAULT_LIMITS.maxBodyBytes + 1) } };

const [categoryHash] = [...loadPersistedDocuments()].find(([, document]) => document.includes('query CategoryPage'))!;

interface PolicyCase {
  name: string;
  server: () => TransportServer;
  request: WireRequest;
  codes: string[];
  /** Refused before execution: no data, and a 4xx status where the transport has one. */
  refused?: boolean;
  /** Sent without a token (an admin's otherwise). */
  anonymous?: boolean;
  check?: (outcome: Outcome) => void;
}

const CASES: PolicyCase[] = [
  {
    name: 'refuses a cost bomb',
    server: () => production,
    request: { query: COST_BOMB },
    refused: true,
    codes: ['QUERY_TOO_COMPLEX'],
  },
  {
    name: 'refuses a token-limit bomb while parsing',
    server: () => production,
    request: { query: TOKEN_BOMB },
    refused: true,
    codes: ['GRAPHQL_PARSE_FAILED'],
  },
  {
    name: 'refuses an anonymous validation bomb (viewer { userId } 490 times) before validating it',
    server: () => production,
    request: { query: VALIDATION_BOMB },
    anonymous: true,
    refused: true,
    codes: ['GRAPHQL_VALIDATION_FAILED'],
    check: (outcome) => expect(outcome.errors[0]?.extensions?.limit).toBe('MAX_REPEATED_FIELD_PAIRS'),
  },
  {
    name: 'refuses a message over MAX_BODY_BYTES',
    server: () => production,
    request: OVERSIZED,
    refused: true,
    codes: ['PAYLOAD_TOO_LARGE'],
  },
  {
    name: 'masks an internal error and names nothing internal',
    server: () => production,
    request: { query: `{ product(productId: "${LEAKY_ID}") { name } }` },
    codes: ['INTERNAL_SERVER_ERROR'],
    check: (outcome) => {
      expect(outcome.data).toEqual({ product: null });
      expect(outcome.errors[0]?.message).toBe('Internal server error');
      expect(outcome.raw).not.toMatch(/attribute|PRODUCT#|t-[0-9a-f]{8}|stack/);
    },
  },
  {
    name: 'refuses introspection in production',
    server: () => production,
    request: { query: '{ __schema { types { name } } }' },
    refused: true,
    codes: ['GRAPHQL_VALIDATION_FAILED'],
    check: (outcome) => expect(outcome.raw).not.toContain('"Mutation"'),
  },
  {
    name: 'suggests no schema names in production',
    server: () => production,
    request: { query: '{ produc(productId: "x") { name } }' },
    refused: true,
    codes: ['GRAPHQL_VALIDATION_FAILED'],
    check: (outcome) => {
      expect(outcome.raw).not.toMatch(/did you mean/i);
      expect(outcome.raw).not.toContain('"product"');
    },
  },
  {
    name: 'refuses a document outside the manifest under PERSISTED_ONLY',
    server: () => locked,
    request: { query: '{ product(productId: "tent-2p") { name } }' },
    refused: true,
    codes: ['PERSISTED_QUERY_REQUIRED'],
  },
  {
    name: 'runs a manifest document sent by its hash under PERSISTED_ONLY',
    server: () => locked,
    request: {
      variables: { category: 'books', first: 2 },
      extensions: { persistedQuery: { version: 1, sha256Hash: categoryHash } },
    },
    codes: [],
    check: (outcome) => expect(outcome.data).toMatchObject({ products: { nodes: [{}, {}] } }),
  },
  {
    name: 'answers a plain query in production, with its DynamoDB cost',
    server: () => production,
    request: { query: '{ product(productId: "tent-2p") { name } }' },
    codes: [],
    check: (outcome) => {
      expect(outcome.data).toEqual({ product: { name: expect.any(String) } });
      expect(outcome.raw).toMatch(/"cost":\{"dynamodb":\{"requests":1,/);
    },
  },
];

describe.each(TRANSPORTS)('over %s', (transport: TransportName) => {
  it.each(CASES)('$name', async ({ server, request, codes, refused = false, anonymous = false, check }) => {
    const outcome = await server().send(transport, request, anonymous ? null : undefined);
    expect(codesOf(outcome)).toEqual(codes);
    if (outcome.status !== null) expect(outcome.status >= 400).toBe(refused);
    if (refused) expect(outcome.data ?? null).toBeNull();
    check?.(outcome);
  });
});

describe.each(['HTTP', 'Lambda'] as const)('a subscription over %s', (transport) => {
  it('is refused with 400, pointing to the WebSocket', async () => {
    const outcome = await production.send(transport, { query: 'subscription { orderEvents { type } }' });
    expect(outcome.status).toBe(400);
    expect(codesOf(outcome)).toEqual(['BAD_REQUEST']);
    expect(outcome.errors[0]?.message).toMatch(/WebSocket.*Server-Sent Events/);
  });
});

describe.each(['HTTP', 'WebSocket', 'SSE'] as const)('a refusal over %s', (transport) => {
  const refusals = async () => {
    const text = await (await fetch(production.server.url.replace(/graphql$/, 'metrics'))).text();
    return Number(/graphql_errors_total\{code="QUERY_TOO_COMPLEX"\} (\d+)/.exec(text)?.[1] ?? 0);
  };

  it('is counted in /metrics by the code its client was told', async () => {
    const before = await refusals();
    await production.send(transport, { query: COST_BOMB });
    expect(await refusals()).toBe(before + 1);
  });
});

describe.each(TRANSPORTS)('a mutation over %s', (transport: TransportName) => {
  it('counts its reads and writes in its own cost record', async () => {
    const outcome = await production.send(transport, {
      query: `mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { replayed order { orderId } userErrors { code } } }`,
      variables: {
        input: { userId: 'alice', items: [{ productId: 'tent-2p', quantity: 1 }], idempotencyKey: `cost-${transport}` },
      },
    });
    expect(outcome.data).toMatchObject({ placeOrder: { replayed: false, userErrors: [] } });
    // One consistent BatchGetItem (user, products, a replay), one TransactWriteItems.
    const cost = /"cost":\{"dynamodb":(\{[^}]*\})/.exec(outcome.raw ?? '')?.[1];
    expect(JSON.parse(cost ?? '{}')).toMatchObject({ requests: 2, writeCapacityUnits: expect.any(Number) });
    expect(JSON.parse(cost ?? '{}').writeCapacityUnits).toBeGreaterThan(0);
  });
});

describe.each(['HTTP', 'SSE', 'Lambda'] as const)('a GET over %s', (transport) => {
  it('never runs a mutation, even with a token and the preflight header', async () => {
    const productId = `get-mutation-${transport.toLowerCase()}`;
    const outcome = await production.send(
      transport,
      {
        query: `mutation { createProduct(input: { productId: "${productId}", name: "Forged", description: "made by a GET",
          category: "books", price: "1.00", stock: 1 }) { product { productId } } }`,
      },
      undefined,
      { method: 'GET', headers: { 'apollo-require-preflight': 'true' } },
    );
    expect(outcome.status).toBe(405);
    expect(codesOf(outcome)).toEqual(['BAD_REQUEST']);
    expect(outcome.data ?? null).toBeNull();
    const read = await production.send(transport, { query: `{ product(productId: "${productId}") { name } }` });
    expect(read.data).toEqual({ product: null });
  });

  it('still runs a query', async () => {
    const outcome = await production.send(
      transport,
      { query: '{ product(productId: "tent-2p") { name } }' },
      undefined,
      { method: 'GET', headers: { 'apollo-require-preflight': 'true' } },
    );
    expect(outcome.data).toEqual({ product: { name: expect.any(String) } });
  });
});
