/**
 * The loaders of one request (src/db/loaders.ts), each made on its first use: a request reads
 * through one loader per access pattern however often it asks for it (so its cache and its
 * batching hold for the whole request), and never through another request's.
 */
import { describe, expect, it } from 'vitest';
import { createDynamo } from '../../src/db/client.js';
import { CursorCodec } from '../../src/db/cursor.js';
import { Loaders } from '../../src/db/loaders.js';
import type { DataSources } from '../../src/db/loaders.js';
import { NODES } from '../../src/table/entities/nodes.js';
import { itemKeyId, userOrderSK } from '../../src/table/keys.js';
import type { UserModel } from '../../src/table/models.js';

// Nothing here sends a request: the endpoint is never called.
const sources: DataSources = {
  dynamo: createDynamo({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1' }),
  tableName: 'loaders',
  cursors: new CursorCodec('loaders-test-cursor-secret-of-at-least-thirty-two'),
};

const user: UserModel = {
  kind: 'User',
  userId: 'u1',
  email: 'u1@example.com',
  name: 'U One',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  orderCount: 0,
  statusCounts: null,
  version: 1,
};
const userKey = itemKeyId(NODES.User.keyOf('u1'));

describe('the loaders of a request', () => {
  it('hand out the same loader each time a request asks for it', () => {
    const loaders = new Loaders(sources);
    const names = [
      'items',
      'userByEmail',
      'ordersPages',
      'shopOrdersPages',
      'categories',
      'productsPages',
      'categoryCounts',
      'reviewsPages',
    ] as const;
    for (const name of names) expect(loaders[name], name).toBe(loaders[name]);
    expect(new Set(names.map((name) => loaders[name])).size).toBe(names.length);
  });

  it('never share a loader or what it cached with another request', async () => {
    const first = new Loaders(sources);
    const second = new Loaders(sources);
    first.prime(user);
    expect(first.items).not.toBe(second.items);
    expect(second.items.cache.has(userKey)).toBe(false);
    await expect(first.user('u1')).resolves.toBe(user);
  });

  it('forget what a write touched, and a write before any read makes nothing to forget', () => {
    const loaders = new Loaders(sources);
    expect(() => loaders.forgetTouched([NODES.User.keyOf('u1')])).not.toThrow();
    loaders.prime(user);
    expect(loaders.items.cache.has(userKey)).toBe(true);
    loaders.forgetTouched([NODES.User.keyOf('u1')]);
    expect(loaders.items.cache.has(userKey)).toBe(false);
  });

  it("forget a page read before the write when the write touched an item of the page's range, and only then", () => {
    const loaders = new Loaders(sources);
    const page = {
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
    };
    loaders.ordersPages.cache.put('u1 page', page);
    // A product's stock lies in no range of a user's orders: the page stays.
    loaders.forgetTouched([NODES.Product.keyOf('p1')]);
    expect(loaders.ordersPages.cache.has('u1 page')).toBe(true);
    // An order of the user's partition lies in it: the page is read again.
    loaders.forgetTouched([{ PK: NODES.User.keyOf('u1').PK, SK: userOrderSK('2026-01-01T00:00:00.000Z', 'o1') }]);
    expect(loaders.ordersPages.cache.has('u1 page')).toBe(false);
  });
});
