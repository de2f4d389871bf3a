import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  NOT_RECORDED,
  newDependencyRecord,
  rangeQuery,
  recordItems,
  recordRead,
} from '../../src/db/dependencyRecord.js';
import type { DependencyRecord } from '../../src/db/dependencyRecord.js';
import {
  categoryProductsQuery,
  shopOrdersQuery,
  shopProductsQuery,
  userOrdersQuery,
} from '../../src/db/pageQueries.js';
import type { PageQuery } from '../../src/db/pagination.js';
import type { ShardedPageQuery } from '../../src/db/shardedPages.js';
import { userCollectionParams } from '../../src/db/userCollection.js';
import { USER_BY_EMAIL, USER_ORDERS } from '../../src/table/entities/ranges.js';
import { USER } from '../../src/table/entities/user.js';
import {
  categoryToItem,
  orderToDetailsItem,
  orderToUserItem,
  productToItem,
  userToItem,
} from '../../src/table/codecs.js';
import type { Item } from '../../src/table/codecs.js';
import {
  emailTag,
  isIndexTag,
  isPublicTag,
  TAG_PATTERN,
  tagsOfChange,
  tagsOfWrite,
  tagsOfWritten,
} from '../../src/table/dependencies.js';
import {
  categoryCounterKey,
  emailGSI1PK,
  orderKey,
  orderShard,
  productKey,
  productSaleKey,
  productShard,
  SEED_MARKER_KEY,
  streamCheckpointKey,
  userKey,
} from '../../src/table/keys.js';
import type { ItemKey } from '../../src/table/keys.js';
import { WriteRecord } from '../../src/graphql/writeRecord.js';
import { aProduct, anOrder, aUser } from '../support/factories.js';

const image = (item: Item | ItemKey) => marshall(item, { removeUndefinedValues: true });
const modify = (before: Item, after: Item) => ({
  Keys: image({ PK: before.PK, SK: before.SK }),
  OldImage: image(before),
  NewImage: image(after),
});

/** What a connection's Query sends, as pagination.ts builds it: the range's tags ride along. */
const pageRead = (query: PageQuery<unknown>): [string, object] => [
  'Query',
  rangeQuery(
    {
      TableName: 'T',
      IndexName: query.indexName,
      KeyConditionExpression: query.keyConditionExpression,
      ExpressionAttributeValues: query.expressionAttributeValues,
    },
    query.range,
  ),
];

/** What each shard's Query of a sharded page sends (shardedPages.ts). */
const shardReads = (query: ShardedPageQuery<unknown>): [string, object][] =>
  query.shardKeys.map((pk, shard) => [
    'Query',
    rangeQuery(
      {
        TableName: 'T',
        IndexName: query.indexName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      },
      query.shardRanges[shard],
    ),
  ]);

const batchGet = (...keys: ItemKey[]): [string, object] => [
  'BatchGetItem',
  new BatchGetCommand({ RequestItems: { T: { Keys: keys } } }),
];

function readsOf(...reads: [operation: string, command: object][]): DependencyRecord {
  const record = newDependencyRecord();
  for (const [operation, command] of reads) recordRead(record, operation, command);
  return record;
}

describe('tagsOfChange (a stream record to what it can change)', () => {
  const product = aProduct({ productId: 'p1', category: 'books', stock: 3 });
  const shopShard = `products:${productShard('p1')}`;

  it('a stock change invalidates the product and every page of its category, the in-stock ones included', () => {
    const tags = tagsOfChange(modify(productToItem(product), productToItem({ ...product, stock: 0 })));
    expect(tags.sort()).toEqual(['category:books', 'product:p1', shopShard]);
  });

  it('a product moving category invalidates the pages of both categories', () => {
    const tags = tagsOfChange(modify(productToItem(product), productToItem({ ...product, category: 'games' })));
    expect(tags.sort()).toEqual(['category:books', 'category:games', 'product:p1', shopShard]);
  });

  it('a new product (INSERT, no old image) invalidates its category', () => {
    const item = productToItem(product);
    expect(tagsOfChange({ Keys: image(productKey('p1')), NewImage: image(item) }).sort()).toEqual([
      'category:books',
      'product:p1',
      shopShard,
    ]);
  });

  it("a status change of an order's copy invalidates the user's orders, the order and both shop-wide views", () => {
    const user = aUser({ userId: 'u1' });
    const order = anOrder(user, [product], { orderId: 'o1' });
    const tags = tagsOfChange(modify(orderToUserItem(order), orderToUserItem({ ...order, status: 'SHIPPED' })));
    const shard = orderShard('o1');
    expect(tags.sort()).toEqual(
      ['order:o1', `orders:PLACED:${shard}`, `orders:SHIPPED:${shard}`, 'user-orders:u1'].sort(),
    );
  });

  it("an order's details item invalidates the order and its shard of the shop's orders", () => {
    const order = anOrder(aUser({ userId: 'u1' }), [product], { orderId: 'o1' });
    expect(tagsOfChange({ NewImage: image(orderToDetailsItem(order)) }).sort()).toEqual([
      'order:o1',
      `orders:ALL:${orderShard('o1')}`,
    ]);
  });

  it('a changed email invalidates the user and the look-ups of the old and the new address', () => {
    const user = aUser({ userId: 'u1', email: 'old@example.com' });
    const tags = tagsOfChange(modify(userToItem(user), userToItem({ ...user, email: 'new@example.com' })));
    expect(tags.sort()).toEqual(['user:u1', emailTag('old@example.com'), emailTag('new@example.com')].sort());
  });

  it("a category counter invalidates the categories list and the category's own pages", () => {
    const counter = categoryToItem({ kind: 'Category', name: 'books', productCount: 2 });
    expect(tagsOfChange({ NewImage: image(counter) }).sort()).toEqual(['categories', 'category:books']);
  });

  it.each([
    ['a stream checkpoint', streamCheckpointKey('api', 'shardId-1')],
    ['a sale marker', productSaleKey('p1', 'o1')],
    ['the demo marker', SEED_MARKER_KEY],
  ])('%s changes no answer', (_, key) => {
    expect(tagsOfChange({ Keys: image(key), NewImage: image({ ...key, anything: 1 }) })).toEqual([]);
  });

  it('a record without images (a KEYS_ONLY stream) maps its keys as a write would', () => {
    expect(tagsOfChange({ Keys: image(productKey('p1')) })).toEqual(['product:p1', `products:${productShard('p1')}`]);
  });

  it("a product's change invalidates its shard of the shop-wide listings (by name and by price)", () => {
    const item = productToItem(product);
    expect(item.GSI4PK).toBe(`PRODUCTS#${productShard('p1')}`);
    expect(tagsOfChange({ NewImage: image(item) })).toContain(`products:${productShard('p1')}`);
    const read = readsOf(
      ...shardReads(shopProductsQuery('T')),
      ...shardReads(shopProductsQuery('T', {}, { field: 'PRICE', direction: 'ASC' })),
      pageRead(categoryProductsQuery('T', 'books', {}, { field: 'PRICE', direction: 'DESC' })),
    );
    expect([...read.tags].sort()).toEqual(['category:books', 'products:0', 'products:1', 'products:2', 'products:3']);
    expect(read.tags.has(`products:${productShard('p1')}`)).toBe(true);
    expect(read.readIndex).toBe(true);
  });
});

describe('tagsOfWrite (a touched key to what the writer evicts)', () => {
  it("names an order's every shop-wide view of its shard, since the key shows neither status", () => {
    const shard = orderShard('o1');
    expect(tagsOfWrite(orderKey('o1')).sort()).toEqual(
      [
        'order:o1',
        `orders:ALL:${shard}`,
        ...['PLACED', 'SHIPPED', 'DELIVERED', 'CANCELLED'].map((s) => `orders:${s}:${shard}`),
      ].sort(),
    );
  });

  it('names the category of a counter it changed, and the categories list', () => {
    expect(tagsOfWrite(categoryCounterKey('books')).sort()).toEqual(['categories', 'category:books']);
  });

  it("names the ranges of a written node's new image, which its key does not show", () => {
    const product = aProduct({ productId: 'p1', category: 'games' });
    expect(tagsOfWritten(product).sort()).toEqual(['category:games', 'product:p1', `products:${productShard('p1')}`]);
    const user = aUser({ userId: 'u1', email: 'new@example.com' });
    expect(tagsOfWritten(user).sort()).toEqual([emailTag('new@example.com'), 'user:u1'].sort());
  });

  it('names nothing for a sale marker', () => {
    expect(tagsOfWrite(productSaleKey('p1', 'o1'))).toEqual([]);
  });
});

describe('WriteRecord (what the writer evicts, worked out when the cache asks)', () => {
  it('names nothing before a write', () => {
    expect(new WriteRecord().tags()).toEqual([]);
  });

  it("names, once each and write by write, every touched key's tags and then the written node's", () => {
    const product = aProduct({ productId: 'p1', category: 'games' });
    const order = anOrder(aUser({ userId: 'u1' }), [product], { orderId: 'o1' });
    const record = new WriteRecord();
    record.note([productKey('p1'), orderKey('o1')], order);
    record.note([productKey('p1')], product);
    record.note([productSaleKey('p1', 'o1')]);
    const expected = [
      ...new Set([
        ...tagsOfWrite(productKey('p1')),
        ...tagsOfWrite(orderKey('o1')),
        ...tagsOfWritten(order),
        ...tagsOfWrite(productKey('p1')),
        ...tagsOfWritten(product),
      ]),
    ];
    expect(record.tags()).toEqual(expected);
    // The product's new image joins its category's pages, which its touched key does not name.
    expect(record.tags()).toContain('category:games');
  });
});

describe('recordRead (what a request read, from the requests the costed client sends)', () => {
  it('a category page depends on the category (an index range), and then on each product it listed', () => {
    const record = readsOf(pageRead(categoryProductsQuery('T', 'books', { inStock: true })));
    expect([...record.tags]).toEqual(['category:books']);
    expect(record.readIndex).toBe(true);
    recordItems(record, pageRead(categoryProductsQuery('T', 'books'))[1], {
      Items: [productToItem(aProduct({ productId: 'p1', category: 'books' }))],
    });
    expect([...record.tags].sort()).toEqual(['category:books', 'product:p1']);
  });

  it("a page of a range of the table's own key needs no item tags: every listed item's key names the range", () => {
    const record = readsOf(pageRead(userOrdersQuery('T', 'u1', null)));
    const order = anOrder(aUser({ userId: 'u1' }), [aProduct({ productId: 'p1' })], { orderId: 'o1' });
    recordItems(record, pageRead(userOrdersQuery('T', 'u1', null))[1], { Items: [orderToUserItem(order)] });
    expect([...record.tags]).toEqual(['user-orders:u1']);
  });

  it("a user's orders page (table or LSI1) depends on the user's orders; the item-collection read on the profile too", () => {
    expect([...readsOf(pageRead(userOrdersQuery('T', 'u1', 'SHIPPED'))).tags]).toEqual(['user-orders:u1']);
    const fused = readsOf([
      'Query',
      rangeQuery(userCollectionParams('T', 'u1', 5), {
        tags: [...USER.tagsOf({ userId: 'u1' }), ...USER_ORDERS.tagsOf({ userId: 'u1' })],
        byIndex: false,
      }),
    ]);
    expect([...fused.tags].sort()).toEqual(['user-orders:u1', 'user:u1']);
    expect(fused.readIndex).toBe(false);
  });

  it('a shop-wide page depends on each shard it read', () => {
    const record = readsOf(...shardReads(shopOrdersQuery('T', 'PLACED')));
    expect([...record.tags]).toEqual(['orders:PLACED:0', 'orders:PLACED:1', 'orders:PLACED:2', 'orders:PLACED:3']);
  });

  it('point reads depend on each item, in document-client and low-level form', () => {
    const record = readsOf(batchGet(userKey('u1'), productKey('p1')), [
      'GetItem',
      new GetItemCommand({ TableName: 'T', Key: { PK: { S: 'ORDER#o1' }, SK: { S: 'DETAILS' } } }),
    ]);
    expect([...record.tags].sort()).toEqual(['order:o1', 'product:p1', 'user:u1']);
  });

  it('a look-up by email depends on the address (hashed: an email may hold a comma)', () => {
    const email = 'a,b@example.com';
    const record = readsOf([
      'Query',
      rangeQuery(
        {
          TableName: 'T',
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk',
          ExpressionAttributeValues: { ':pk': emailGSI1PK(email) },
        },
        USER_BY_EMAIL.read({ email }),
      ),
    ]);
    expect([...record.tags]).toEqual([emailTag(email)]);
    expect(emailTag(email)).toMatch(TAG_PATTERN);
  });

  it.each([
    ['a Scan', 'Scan', new ScanCommand({ TableName: 'T' })],
    [
      'a Query built without its range (of an index no range declares, say)',
      'Query',
      new QueryCommand({
        TableName: 'T',
        IndexName: 'GSI9',
        KeyConditionExpression: 'X = :pk',
        ExpressionAttributeValues: { ':pk': 'ANY' },
      }),
    ],
    [
      'a Query of the user partition without its range, whatever its key condition says',
      'Query',
      new QueryCommand({
        TableName: 'T',
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': 'USER#u1' },
      }),
    ],
    [
      'a point read of an item no answer reads',
      'GetItem',
      new GetItemCommand({ TableName: 'T', Key: marshall(SEED_MARKER_KEY) }),
    ],
  ])('%s makes the answer uncacheable', (_, operation, command) => {
    expect(readsOf([operation, command]).uncacheable).toBeDefined();
  });

  it('a read and the change of what it read always share a tag', () => {
    const product = aProduct({ productId: 'p1', category: 'books' });
    const user = aUser({ userId: 'u1' });
    const order = anOrder(user, [product], { orderId: 'o1', status: 'PLACED' });
    const cases: [read: DependencyRecord, changed: Item][] = [
      [readsOf(pageRead(categoryProductsQuery('T', 'books'))), productToItem(product)],
      [readsOf(batchGet(productKey('p1'))), productToItem(product)],
      [readsOf(pageRead(userOrdersQuery('T', 'u1', null))), orderToUserItem(order)],
      [readsOf(pageRead(userOrdersQuery('T', 'u1', 'PLACED'))), orderToUserItem(order)],
      [readsOf(batchGet(orderKey('o1'))), orderToDetailsItem(order)],
      [readsOf(batchGet(userKey('u1'))), userToItem(user)],
      [readsOf(...shardReads(shopOrdersQuery('T', null))), orderToDetailsItem(order)],
      [readsOf(...shardReads(shopOrdersQuery('T', 'PLACED'))), orderToUserItem(order)],
      [readsOf(...shardReads(shopProductsQuery('T'))), productToItem(product)],
    ];
    for (const [read, changed] of cases) {
      const tags = tagsOfChange({ NewImage: image(changed) });
      expect(tags.some((tag) => read.tags.has(tag))).toBe(true);
    }
  });
});

describe('tag kinds', () => {
  it('only catalog tags are public; index ranges are the eventually consistent ones', () => {
    expect(['product:p1', 'category:books', 'categories'].every(isPublicTag)).toBe(true);
    expect(['user:u1', 'user-orders:u1', 'order:o1', 'orders:ALL:0', emailTag('a@b.c')].some(isPublicTag)).toBe(false);
    expect(['category:books', 'orders:ALL:0', emailTag('a@b.c')].every(isIndexTag)).toBe(true);
    expect(['product:p1', 'user-orders:u1', 'categories'].some(isIndexTag)).toBe(false);
  });
});

describe('NOT_RECORDED (the record of an execution whose reads are not recorded)', () => {
  it('reads as uncacheable and refuses a recorded read rather than keeping it for the next execution', () => {
    expect(NOT_RECORDED.uncacheable).toBeDefined();
    const read = new GetItemCommand({ TableName: 'T', Key: { PK: { S: 'ORDER#o1' }, SK: { S: 'DETAILS' } } });
    recordRead(NOT_RECORDED, 'GetItem', read); // uncacheable already: nothing to record
    expect(() => NOT_RECORDED.tags.add('order:o1')).toThrow(/records nothing/);
    expect(NOT_RECORDED.tags.size).toBe(0);
    expect(Object.isFrozen(NOT_RECORDED)).toBe(true);
  });
});
