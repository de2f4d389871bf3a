/**
 * The reads' own unmarshalling (src/db/attributeValues.ts) against the SDK's, its oracle: every
 * kind of AttributeValue and the edge values of numbers give what the document client gives
 * (the same value, or the same error), and every codec reads back, through it, what it wrote.
 */
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { keyAttributes, toAttributeMap, unmarshallItem, unmarshallItems } from '../../src/db/attributeValues.js';
import { rangeQuery } from '../../src/db/dependencyRecord.js';
import type { AttributeMap } from '../../src/db/attributeValues.js';
import { CorruptItemError } from '../../src/table/codecs.js';
import { ORDER, USER_ORDER } from '../../src/table/entities/order.js';
import { CATEGORY, PRODUCT } from '../../src/table/entities/product.js';
import { PRODUCT_RATING, PRODUCT_REVIEW, REVIEW, reviewIdOf } from '../../src/table/entities/review.js';
import { USER } from '../../src/table/entities/user.js';
import { aProduct, anOrder, aUser } from '../support/factories.js';

/** What the document client makes of an item: util-dynamodb's unmarshall, as lib-dynamodb calls it per attribute. */
const sdk = (map: AttributeMap) => unmarshall(map);
const outcome = (read: () => unknown) => {
  try {
    return { value: read() };
  } catch (error) {
    return { error: (error as Error).message };
  }
};

const bytes = new Uint8Array([0, 1, 254, 255]);
const VALUES: [string, AttributeValue][] = [
  ['a string', { S: 'Zoë #1 "quoted"' }],
  ['an empty string', { S: '' }],
  ['zero', { N: '0' }],
  ['minus zero', { N: '-0' }],
  ['a negative integer', { N: '-42' }],
  ['a fraction', { N: '19.99' }],
  ['an exponent', { N: '1E3' }],
  ['the largest safe integer', { N: '9007199254740991' }],
  ['the smallest safe integer', { N: '-9007199254740991' }],
  ['an integer past the safe ones (a BigInt)', { N: '9007199254740993' }],
  ['a number past the safe integers that no BigInt holds', { N: '1.5E20' }],
  ['true', { BOOL: true }],
  ['false', { BOOL: false }],
  ['null', { NULL: true }],
  ['bytes', { B: bytes }],
  ['a string set', { SS: ['a', 'b'] }],
  ['a number set', { NS: ['1', '2.5', '9007199254740993'] }],
  ['a byte set', { BS: [bytes] }],
  ['an empty list', { L: [] }],
  ['an empty map', { M: {} }],
  [
    'nested lists and maps',
    { L: [{ M: { price: { N: '1999' }, tags: { SS: ['x'] }, none: { NULL: true } } }, { L: [{ N: '1' }] }] },
  ],
];

describe('unmarshalling an item', () => {
  it.each(VALUES)('reads %s as the document client does', (_name, value) => {
    const map = { PK: { S: 'USER#u1' }, value };
    expect(outcome(() => unmarshallItem(map))).toEqual(outcome(() => sdk(map)));
  });

  it('refuses an AttributeValue of no known type, and one with no member set, as the SDK does', () => {
    for (const value of [{ X: 'y' }, {}] as unknown as AttributeValue[]) {
      const map = { value };
      const ours = outcome(() => unmarshallItem(map));
      expect(ours.error).toBeDefined();
      expect(ours).toEqual(outcome(() => sdk(map)));
    }
  });

  it('keeps the attributes in their order, and reads every item of an output (none when absent)', () => {
    const maps = [marshall({ b: 1, a: 'x', c: [1, 'two'] }), marshall({ PK: 'P', SK: 'S' })] as AttributeMap[];
    const items = unmarshallItems(maps);
    expect(items).toEqual(maps.map(sdk));
    expect(Object.keys(items[0]!)).toEqual(['b', 'a', 'c']);
    expect(unmarshallItems(undefined)).toEqual([]);
  });

  it('sends keys and values as the document client marshals them', () => {
    expect(keyAttributes({ PK: 'ORDER#o1', SK: 'DETAILS' })).toEqual(marshall({ PK: 'ORDER#o1', SK: 'DETAILS' }));
    const values = { ':pk': 'CATEGORY#books', ':min': 0, ':max': 1999, ':gone': undefined };
    expect(toAttributeMap(values)).toEqual({
      ':pk': { S: 'CATEGORY#books' },
      ':min': { N: '0' },
      ':max': { N: '1999' },
    });
  });

  it("sends a page's Query as the low-level command: its values and start key marshalled, the rest as given", () => {
    const command = rangeQuery(
      {
        TableName: 'T',
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': 'USER#u1', ':max': 5 },
        ExclusiveStartKey: { PK: 'USER#u1', SK: 'ORDER#2026' },
        ScanIndexForward: false,
        Limit: 21,
      },
      undefined,
    );
    expect(command).toBeInstanceOf(QueryCommand);
    expect(command.input).toEqual({
      TableName: 'T',
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': { S: 'USER#u1' }, ':max': { N: '5' } },
      ExclusiveStartKey: { PK: { S: 'USER#u1' }, SK: { S: 'ORDER#2026' } },
      ScanIndexForward: false,
      Limit: 21,
    });
  });
});

describe('every codec through it', () => {
  const user = aUser({ userId: 'u1', orderCount: 0 });
  const product = aProduct({ productId: 'p1', priceCents: 0, stock: 0 });
  // The dearest price a product's keys hold (12 digits of cents: ranges.ts PRICE_DIGITS).
  const dear = aProduct({ productId: 'p2', priceCents: 999_999_999_999, stock: 1 });
  const order = anOrder(user, [product, dear], { orderId: 'o1' });
  const review = {
    kind: 'Review' as const,
    reviewId: reviewIdOf('p1', 'u1'),
    productId: 'p1',
    authorId: 'u1',
    rating: 5,
    title: 'Ünïcode ✓',
    body: '',
    authorName: 'Ada',
    verifiedPurchase: false,
    createdAt: '2026-06-01T12:00:00.000Z',
    updatedAt: '2026-06-01T12:00:00.000Z',
    version: 1,
  };
  const cases: [string, { toItem(model: never): Record<string, unknown>; fromItem(item: never): unknown }, unknown][] =
    [
      ['a user with status counts', USER.codec, user],
      ['a user without them', USER.codec, { ...user, statusCounts: null }],
      ['a product at price 0', PRODUCT.codec, product],
      ['a product at the dearest price', PRODUCT.codec, dear],
      ['an order (details)', ORDER.codec, order],
      ["an order (its user's copy)", USER_ORDER.codec, order],
      ['a category counter', CATEGORY.codec, { kind: 'Category', name: 'books', productCount: 3 }],
      ['a review', REVIEW.codec, review],
      ["a review (its product's copy)", PRODUCT_REVIEW.codec, review],
      [
        'a rating',
        PRODUCT_RATING.codec,
        { kind: 'ProductRating', productId: 'p1', count: 2, sum: 9, histogram: [0, 0, 0, 1, 1] },
      ],
    ];

  it.each(cases)('reads back %s as written', (_name, codec, model) => {
    const written = marshall(codec.toItem(model as never), { removeUndefinedValues: true }) as AttributeMap;
    const item = unmarshallItem(written);
    expect(item).toEqual(sdk(written));
    expect(codec.fromItem(item as never)).toEqual(model);
  });

  it('refuses money that is not integer cents, and past the safe integers, as before', () => {
    const written = marshall(PRODUCT.codec.toItem(product)) as AttributeMap;
    for (const price of ['19.99', '9007199254740993']) {
      const item = unmarshallItem({ ...written, price: { N: price } });
      expect(() => PRODUCT.codec.fromItem(item)).toThrow(CorruptItemError);
    }
  });
});
