import { describe, expect, it } from 'vitest';
import {
  assertCategory,
  assertId,
  categoryGSI1PK,
  emailGSI1PK,
  emailGuardKey,
  itemKeyId,
  MAX_EMAIL_LENGTH,
  normalizeEmail,
  orderKey,
  priceRange,
  productGSI1SK,
  productPriceGSI3SK,
  productShard,
  PRODUCT_SHARDS,
  shopProductsGSI4PK,
  productKey,
  statusLSI1SKPrefix,
  userKey,
  userOrderLSI1SK,
  userOrderSK,
  userPK,
} from '../../src/table/keys.js';
import { expectInvalidKey } from '../support/refusal.js';

const PLACED_AT = '2026-06-01T12:00:00.000Z';

describe('assertId', () => {
  it.each(['a', 'alice', 'demo-alice-001', 'A_z-0_9', 'x'.repeat(64)])('accepts %j unchanged', (id) => {
    expect(assertId(id, 'userId')).toBe(id);
  });

  it.each([
    ['an empty id', ''],
    ['a # that could forge a key', 'alice#PROFILE'],
    ['a lone #', '#'],
    ['a NUL character', 'a\u0000b'],
    ['a newline', 'alice\n'],
    ['a DEL character', 'a\u007fb'],
    ['65 characters', 'x'.repeat(65)],
    ['a space', 'al ice'],
    ['a slash', 'a/b'],
    ['a colon', 'User:alice'],
    ['a non-ASCII letter', 'zoë'],
  ])('refuses %s naming the argument', (_case, id) => {
    expectInvalidKey(() => assertId(id, 'orderId'), 'orderId');
  });

  it('names "id" when no argument name is given', () => {
    expectInvalidKey(() => assertId('a#b'), 'id');
  });

  it('does not echo a huge rejected id back in full', () => {
    const error = expectInvalidKey(() => assertId('#'.repeat(10_000), 'userId'), 'userId');
    expect(error.message.length).toBeLessThan(200);
  });
});

describe('assertCategory', () => {
  it.each(['books', 'home-garden_2', 'x'.repeat(64)])('accepts %j unchanged', (category) => {
    expect(assertCategory(category)).toBe(category);
  });

  it.each(['', 'Books', 'CATEGORY#x', 'a#b', 'sports gear', 'x'.repeat(65), 'a\u0000'])(
    'refuses %j naming category',
    (category) => {
      expectInvalidKey(() => assertCategory(category), 'category');
    },
  );
});

describe('normalizeEmail', () => {
  it.each([
    ['alice@example.com', 'alice@example.com'],
    ['Alice@Example.COM', 'alice@example.com'],
    ['  bob@example.com  ', 'bob@example.com'],
    ['\tCarol.Smith+tag@Mail.Example.org\n', 'carol.smith+tag@mail.example.org'],
  ])('normalizes %j to %j', (email, normalized) => {
    expect(normalizeEmail(email)).toBe(normalized);
  });

  it.each([
    ['an empty string', ''],
    ['only whitespace', '   '],
    ['no @', 'not-an-email'],
    ['no dot in the domain', 'alice@example'],
    ['nothing before the @', '@example.com'],
    ['nothing after the last dot', 'alice@example.'],
    ['two @', 'alice@@example.com'],
    ['two @ apart', 'alice@bob@example.com'],
    ['inner whitespace', 'ali ce@example.com'],
    ['a # in the local part', 'alice#PROFILE@example.com'],
    ['a # in the domain', 'alice@example.com#UNIQUE'],
    ['a control character', 'ali\u0001ce@example.com'],
    ['a DEL character', 'alice\u007f@example.com'],
    ['more than 254 characters', `${'a'.repeat(MAX_EMAIL_LENGTH - 11)}@example.com`],
  ])('refuses %s naming the argument', (_case, email) => {
    expectInvalidKey(() => normalizeEmail(email), 'email');
  });

  it('accepts an address of exactly 254 characters', () => {
    const email = `${'a'.repeat(MAX_EMAIL_LENGTH - 12)}@example.com`;
    expect(email).toHaveLength(MAX_EMAIL_LENGTH);
    expect(normalizeEmail(email)).toBe(email);
  });

  it('names the argument it is given', () => {
    expectInvalidKey(() => normalizeEmail('nope', 'input.email'), 'input.email');
  });
});

describe('key builders', () => {
  it.each([
    ['userKey', () => userKey('alice'), { PK: 'USER#alice', SK: 'PROFILE' }],
    ['userPK', () => userPK('alice'), 'USER#alice'],
    ['orderKey', () => orderKey('o-1'), { PK: 'ORDER#o-1', SK: 'DETAILS' }],
    ['productKey', () => productKey('book-ddia'), { PK: 'PRODUCT#book-ddia', SK: 'DETAILS' }],
    ['emailGuardKey', () => emailGuardKey('alice@example.com'), { PK: 'EMAIL#alice@example.com', SK: 'UNIQUE' }],
    ['emailGSI1PK', () => emailGSI1PK('alice@example.com'), 'EMAIL#alice@example.com'],
    ['categoryGSI1PK', () => categoryGSI1PK('books'), 'CATEGORY#books'],
    ['productGSI1SK', () => productGSI1SK('Tent 2P', 'tent-2p'), 'PRODUCT#tent 2p#tent-2p'],
    ['productPriceGSI3SK', () => productPriceGSI3SK(8999, 'tent-2p'), 'PRICE#000000008999#tent-2p'],
    ['shopProductsGSI4PK', () => shopProductsGSI4PK(3), 'PRODUCTS#3'],
    ['userOrderSK', () => userOrderSK(PLACED_AT, 'o-1'), `ORDER#${PLACED_AT}#o-1`],
    ['statusLSI1SKPrefix', () => statusLSI1SKPrefix('SHIPPED'), 'STATUS#SHIPPED#'],
    ['userOrderLSI1SK', () => userOrderLSI1SK('SHIPPED', PLACED_AT, 'o-1'), `STATUS#SHIPPED#${PLACED_AT}#o-1`],
  ])('%s builds the documented key', (_name, build, expected) => {
    expect(build()).toEqual(expected);
  });

  it.each([
    ['userKey', () => userKey('alice#ORDER'), 'userId'],
    ['userPK', () => userPK('alice#ORDER'), 'userId'],
    ['orderKey', () => orderKey('o#DETAILS'), 'orderId'],
    ['productKey', () => productKey('p#DETAILS'), 'productId'],
    ['productGSI1SK', () => productGSI1SK('Tent', 'p#x'), 'productId'],
    ['categoryGSI1PK', () => categoryGSI1PK('books#x'), 'category'],
    ['userOrderSK', () => userOrderSK(PLACED_AT, 'o#x'), 'orderId'],
    ['userOrderLSI1SK', () => userOrderLSI1SK('PLACED', PLACED_AT, 'o#x'), 'orderId'],
  ])('%s refuses an id holding # before building a key', (_name, build, argumentName) => {
    expectInvalidKey(build, argumentName);
  });

  it('orders user-partition order keys chronologically', () => {
    const earlier = userOrderSK('2026-06-01T12:00:00.000Z', 'zzz');
    const later = userOrderSK('2026-06-01T12:00:00.001Z', 'aaa');
    expect(earlier < later).toBe(true);
  });

  it('gives distinct item keys distinct ids even when their parts could run together', () => {
    expect(itemKeyId({ PK: 'USER#a', SK: 'PROFILE' })).not.toBe(itemKeyId({ PK: 'USER#aP', SK: 'ROFILE' }));
  });

  it('gives equal item keys equal ids', () => {
    expect(itemKeyId({ PK: 'USER#a', SK: 'PROFILE' })).toBe(itemKeyId(userKey('a')));
  });
});

describe('the price order', () => {
  it('sorts prices as numbers and a range takes both bounds and everything between', () => {
    const keys = [100_000_000, 5, 999, 1000, 0].map((cents) => productPriceGSI3SK(cents, 'p'));
    expect([...keys].sort()).toEqual([0, 5, 999, 1000, 100_000_000].map((cents) => productPriceGSI3SK(cents, 'p')));
    const { from, to } = priceRange(999, 1000);
    const inside = (cents: number, id = 'zz_-ZZ') => {
      const key = productPriceGSI3SK(cents, id);
      return key >= from && key <= to;
    };
    expect([998, 999, 1000, 1001].map((cents) => inside(cents))).toEqual([false, true, true, false]);
    expect(inside(999, '0')).toBe(true);
    expect(priceRange(undefined, undefined)).toEqual({ from: 'PRICE#', to: 'PRICE#~' });
  });

  it('spreads products over every shard, each product always on the same one', () => {
    const shards = new Set(Array.from({ length: 64 }, (_, i) => productShard(`p-${i}`)));
    expect([...shards].sort()).toEqual(Array.from({ length: PRODUCT_SHARDS }, (_, i) => i));
    expect(productShard('p-1')).toBe(productShard('p-1'));
    expect(() => shopProductsGSI4PK(PRODUCT_SHARDS)).toThrow();
  });
});
