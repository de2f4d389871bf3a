/**
 * The lookahead (and the first page fused into the user's read) honours @skip and @include, with
 * literals and with variables: a connection the directives remove costs no DynamoDB request and
 * no read capacity. Counted by the request's own cost record (`extensions.cost`, an admin's).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { startTestServer } from './support/harness.js';
import type { GraphQLResponse, TestServer } from './support/harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await putItems(server.dynamo.doc, server.tableName, demoItems());
});
afterAll(() => server?.stop());

const PAGES = ['orders(first: 5)', 'orders(first: 20)', 'orders(first: 3, status: SHIPPED)', 'orders(last: 2)'];
const costOf = (response: GraphQLResponse) => ({
  requests: response.extensions?.cost?.dynamodb.requests,
  readCapacityUnits: response.extensions?.cost?.dynamodb.readCapacityUnits,
});

describe('connections removed by @skip or @include', () => {
  let alone: GraphQLResponse;
  beforeAll(async () => {
    alone = await server.gql('{ user(userId: "alice") { userId } }');
  });

  it.each([
    ['@skip(if: true)', (page: string) => `${page} @skip(if: true) { nodes { orderId } }`, {}],
    ['@include(if: false)', (page: string) => `${page} @include(if: false) { nodes { orderId } }`, {}],
    ['@skip(if: $s), $s true', (page: string) => `${page} @skip(if: $s) { nodes { orderId } }`, { s: true }],
    ['@include(if: $s), $s false', (page: string) => `${page} @include(if: $s) { nodes { orderId } }`, { s: false }],
    [
      'an inline fragment with @skip(if: $s)',
      (page: string) => `... @skip(if: $s) { ${page} { nodes { orderId } } }`,
      { s: true },
    ],
  ])('cost what the user alone costs: four pages under %s', async (_, select, variables) => {
    const declared = Object.keys(variables).length > 0 ? '($s: Boolean!)' : '';
    const fields = PAGES.map((page, i) => select(`p${i}: ${page}`)).join(' ');
    const response = await server.gql(`query${declared} { user(userId: "alice") { userId ${fields} } }`, variables);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual(alone.data);
    expect(costOf(response)).toEqual(costOf(alone));
  });

  it('costs nothing for a skipped fragment spread either', async () => {
    const response = await server.gql(
      'query($s: Boolean!) { user(userId: "alice") { userId ...Orders @skip(if: $s) } } fragment Orders on User { orders(first: 10) { nodes { orderId } } }',
      { s: true },
    );
    expect(response.data).toEqual(alone.data);
    expect(costOf(response)).toEqual(costOf(alone));
  });

  it('still reads the page, in the same one request, when the variable keeps it', async () => {
    const response = await server.gql(
      'query($s: Boolean!) { user(userId: "alice") { userId orders(first: 5) @skip(if: $s) { nodes { orderId } } } }',
      { s: false },
    );
    expect(response.data?.user).toMatchObject({ orders: { nodes: expect.any(Array) } });
    expect(response.extensions?.cost?.dynamodb.requests).toBe(1);
  });
});
