import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { batchGetItems } from '../src/db/batchGet.js';
import { DEFAULT_BATCH_RETRY } from '../src/db/retry.js';
import { newRequestCost } from '../src/db/capacity.js';
import { costed, createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { toGlobalId } from '../src/graphql/globalId.js';
import { productKey } from '../src/table/keys.js';
import type { ItemKey } from '../src/table/keys.js';
import { aProduct, store } from './support/factories.js';
import { endpoint, errorCodes, startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';

/**
 * An attribute as the client stack sees it: a plain string once the document client has
 * unmarshalled it, `{ S: '...' }` in DynamoDB's wire format. The helpers below accept both,
 * so they work whatever step of the stack they run at.
 */
type Attribute = string | { S?: string };
type KeyLike = Record<string, Attribute>;

interface BatchGetShape {
  RequestItems?: Record<string, { Keys?: KeyLike[] }>;
  Responses?: Record<string, KeyLike[]>;
  UnprocessedKeys?: Record<string, { Keys?: KeyLike[] }>;
}

const text = (attribute: Attribute | undefined): string =>
  typeof attribute === 'string' ? attribute : (attribute?.S ?? '');

/** The partition keys a BatchGetItem request asks for, over all its tables. */
const requestedPKs = (input: BatchGetShape): string[] =>
  Object.values(input.RequestItems ?? {}).flatMap((table) => (table.Keys ?? []).map((key) => text(key.PK)));

/** Records the keys of every BatchGetItem request `client` sends. */
function recordBatchGets(client: DynamoDBClient): string[][] {
  const requests: string[][] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'BatchGetItemCommand') requests.push(requestedPKs(args.input as BatchGetShape));
      return next(args);
    },
    { step: 'initialize', name: 'testRecordBatchGets' },
  );
  return requests;
}

describe('batchGetItems against DynamoDB Local', () => {
  let server: TestServer;
  let reader: Dynamo;
  let sent: string[][];
  const stored = Array.from({ length: 180 }, (_, i) => aProduct({ productId: `batch-${i}` }));
  // 180 stored + 30 missing = 210 distinct keys; 40 of them asked twice; 250 keys, shuffled.
  const distinct: ItemKey[] = [
    ...stored.map((product) => productKey(product.productId)),
    ...Array.from({ length: 30 }, (_, i) => productKey(`missing-${i}`)),
  ];
  const duplicates = [...distinct.slice(0, 35), ...distinct.slice(180, 185)];
  const keys: ItemKey[] = [...distinct, ...duplicates]
    .map((key, i) => ({ key, rank: (i * 7919) % 251 }))
    .sort((a, b) => a.rank - b.rank)
    .map(({ key }) => key);

  beforeAll(async () => {
    server = await startTestServer();
    await store(server.dynamo.doc, server.tableName, { products: stored });
    reader = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
    sent = recordBatchGets(reader.client);
  });
  afterAll(async () => {
    reader.client.destroy();
    await server.stop();
  });
  beforeEach(() => {
    sent.length = 0;
  });

  const readAll = async () => {
    const cost = newRequestCost();
    const results = await batchGetItems(costed(reader.doc, cost), server.tableName, keys);
    return { results, cost };
  };

  it('returns one result per key, in key order, with null where no item exists', async () => {
    expect(keys).toHaveLength(250);
    const { results } = await readAll();
    const storedPKs = new Set(stored.map((product) => productKey(product.productId).PK));
    expect(results.map((item) => (item ? String(item.PK) : null))).toEqual(
      keys.map((key) => (storedPKs.has(key.PK) ? key.PK : null)),
    );
    expect(results.filter((item) => item === null)).toHaveLength(30 + 5);
  });

  it('reads 250 keys with duplicates in 3 BatchGetItem requests of at most 100 distinct keys', async () => {
    const { cost } = await readAll();
    expect(cost.requests).toBe(3);
    expect(cost.byOperation).toEqual({ BatchGetItem: 3 });
    expect(sent.map((pks) => pks.length).sort((a, b) => a - b)).toEqual([10, 100, 100]);
    for (const pks of sent) expect(new Set(pks).size).toBe(pks.length);
    expect(new Set(sent.flat())).toEqual(new Set(distinct.map((key) => key.PK)));
  });
  // A key as the table's codecs would never build it (they refuse such ids before any read).
  const hostile: ItemKey = { PK: 'PRODUCT#x\u0000"}<script>', SK: '#PRODUCT#\u{1F4A3}' };
  it.each([
    ['an item present', () => productKey(stored[0]!.productId)],
    ['an item absent', () => productKey('missing-one')],
    ['a hostile key', () => hostile],
  ])('reads one key (%s) as one GetItem, answering as a batch with it does', async (_, keyOf) => {
    const key = keyOf();
    const cost = newRequestCost();
    const [alone] = await batchGetItems(costed(reader.doc, cost), server.tableName, [key, key], {
      consistentRead: true,
    });
    expect(cost.requests).toBe(1);
    expect(cost.byOperation).toEqual({ GetItem: 1 });
    expect(sent).toHaveLength(0);
    // The same key beside another distinct key goes in a BatchGetItem.
    const other = productKey(stored[1]!.productId);
    const [batched] = await batchGetItems(reader.doc, server.tableName, [key, other], { consistentRead: true });
    expect(sent).toHaveLength(1);
    expect(alone).toEqual(batched);
  });

  it('refuses one malformed key as a batch with it is refused, counting the one request', async () => {
    const malformed: ItemKey = { PK: 'PRODUCT#x', SK: '' }; // DynamoDB refuses an empty key attribute
    const cost = newRequestCost();
    const alone = await batchGetItems(costed(reader.doc, cost), server.tableName, [malformed]).catch((e: Error) => e);
    const batched = await batchGetItems(reader.doc, server.tableName, [malformed, productKey('x')]).catch(
      (e: Error) => e,
    );
    expect(alone).toBeInstanceOf(Error);
    expect((alone as Error).name).toBe('ValidationException');
    expect((batched as Error).name).toBe((alone as Error).name);
    expect(cost).toMatchObject({ requests: 1, byOperation: { GetItem: 1 } });
  });

  it('counts a call that fails, and leaves commands without consumed capacity uncounted', async () => {
    const cost = newRequestCost();
    const doc = costed(reader.doc, cost);
    await expect(doc.send(new GetCommand({ TableName: 'no-such-table', Key: { PK: 'x', SK: 'y' } }))).rejects.toThrow();
    await doc.send(new DescribeTableCommand({ TableName: server.tableName }));
    expect(cost).toMatchObject({ requests: 1, byOperation: { GetItem: 1 } });
    expect(cost.pending?.size ?? 0).toBe(0);
  });
});

describe('BatchGetItem through the API when DynamoDB leaves keys unprocessed', () => {
  let server: TestServer;
  /** How many of the next BatchGetItem responses withhold keys, and how many keys each withholds. */
  const withholding = { responses: 0, keys: 0 };
  let asked: string[][] = [];
  let withheld: string[][] = [];
  const products = Array.from({ length: 10 }, (_, i) => aProduct({ productId: `unprocessed-${i}` }));
  const ids = products.map((product) => toGlobalId('Product', product.productId));

  /**
   * Moves `withholding.keys` items of each of the next `withholding.responses` BatchGetItem
   * responses from Responses to UnprocessedKeys, as DynamoDB does when it runs out of
   * capacity or response size.
   */
  function withholdKeys(client: DynamoDBClient) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        asked.push(requestedPKs(args.input as BatchGetShape));
        const result = await next(args);
        if (withholding.responses > 0) {
          withholding.responses -= 1;
          const output = result.output as BatchGetShape;
          const moved: string[] = [];
          for (const [table, items] of Object.entries(output.Responses ?? {})) {
            const kept = items.slice(withholding.keys);
            const held = items.slice(0, withholding.keys);
            output.Responses = { ...output.Responses, [table]: kept };
            output.UnprocessedKeys = {
              ...output.UnprocessedKeys,
              [table]: {
                Keys: [...(output.UnprocessedKeys?.[table]?.Keys ?? []), ...held.map(({ PK, SK }) => ({ PK, SK }))],
              } as { Keys: KeyLike[] },
            };
            moved.push(...held.map((item) => text(item.PK)));
          }
          withheld.push(moved);
        }
        return result;
      },
      { step: 'initialize', name: 'testWithholdKeys' },
    );
  }

  beforeAll(async () => {
    server = await startTestServer({ configureClient: withholdKeys });
    await store(server.dynamo.doc, server.tableName, { products });
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    withholding.responses = 0;
    withholding.keys = 0;
    asked = [];
    withheld = [];
  });

  const NODES = 'query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Product { productId } } }';

  it('returns every node when the first two responses leave keys unprocessed', async () => {
    Object.assign(withholding, { responses: 2, keys: 4 });
    const response = await server.gql<{ nodes: { id: string }[] }>(NODES, { ids });
    expect(response.errors).toBeUndefined();
    expect(response.data?.nodes.map((node) => node.id)).toEqual(ids);
    expect(withheld.map((pks) => pks.length)).toEqual([4, 4]);
  });

  it('counts every retry in extensions.cost', async () => {
    Object.assign(withholding, { responses: 2, keys: 4 });
    const response = await server.gql(NODES, { ids });
    expect(response.errors).toBeUndefined();
    expect(response.extensions?.cost?.dynamodb.requests).toBe(3);
  });

  it('asks again for the unprocessed keys only', async () => {
    Object.assign(withholding, { responses: 1, keys: 3 });
    const response = await server.gql(NODES, { ids });
    expect(response.errors).toBeUndefined();
    expect(asked).toHaveLength(2);
    expect(asked[0]).toHaveLength(10);
    expect(withheld[0]).toHaveLength(3);
    expect([...(asked[1] ?? [])].sort()).toEqual([...(withheld[0] ?? [])].sort());
  });

  // Two keys: one alone is read with a GetItem, which leaves nothing unprocessed.
  const TWO_PRODUCTS =
    '{ a: product(productId: "unprocessed-0") { productId } b: product(productId: "unprocessed-1") { productId } }';

  it('gives the field a SERVICE_UNAVAILABLE error, not a null, when keys stay unprocessed', async () => {
    Object.assign(withholding, { responses: Number.POSITIVE_INFINITY, keys: 1 });
    const response = await server.gql<{ a: { productId: string } | null }>(TWO_PRODUCTS);
    expect(errorCodes(response)).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
    expect(response.errors?.map((error) => error.path)).toEqual([['a'], ['b']]);
    expect(response.errors?.[0]?.message).toMatch(/unread after \d+ attempts; try again/);
    expect(response.data).toEqual({ a: null, b: null });
  });

  it('gives up after the bounded number of attempts', async () => {
    Object.assign(withholding, { responses: Number.POSITIVE_INFINITY, keys: 1 });
    const response = await server.gql(TWO_PRODUCTS);
    expect(errorCodes(response)).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
    expect(asked).toHaveLength(DEFAULT_BATCH_RETRY.maxAttempts);
    expect(response.extensions?.cost?.dynamodb.requests).toBe(DEFAULT_BATCH_RETRY.maxAttempts);
  });
});
