/**
 * Pure parts of the new access patterns: GSI2's keys and shards, windows as key ranges, the
 * requests the connections build, the filtered pages' Limit, and the migrations' pacing.
 */
import { describe, expect, it } from 'vitest';
import { categoryProductsQuery, shopOrdersQuery, userOrdersQuery } from '../../src/db/pageQueries.js';
import { nextLimit } from '../../src/db/pagination.js';
import { CapacityLimiter } from '../../src/migrations/capacityLimiter.js';
import { ORDER_SHARDS, orderShard, placedWindow, shopOrderGSI2SK, shopOrdersGSI2PK } from '../../src/table/keys.js';
import { expectBadUserInput } from '../support/refusal.js';

describe('GSI2 keys', () => {
  it('puts an order in a stable shard, and spreads many orders over every shard evenly', () => {
    expect(orderShard('o-1')).toBe(orderShard('o-1'));
    const counts = new Array<number>(ORDER_SHARDS).fill(0);
    for (let i = 0; i < 4000; i++) counts[orderShard(`order-${i}`)]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });

  it('names the all-orders and the status views apart', () => {
    expect(shopOrdersGSI2PK('ALL', 2)).toBe('ORDERS#ALL#2');
    expect(shopOrdersGSI2PK('SHIPPED', 0)).toBe('ORDERS#STATUS#SHIPPED#0');
    expect(() => shopOrdersGSI2PK('ALL', ORDER_SHARDS)).toThrow();
  });

  it('makes a window half-open: an order at placedBefore sorts above the upper bound', () => {
    const at = '2026-05-01T10:00:00.000Z';
    const { from, to } = placedWindow('ORDER#', at, '2026-05-01T11:00:00.000Z');
    expect(shopOrderGSI2SK(at, 'a') >= from).toBe(true);
    expect(shopOrderGSI2SK('2026-05-01T10:59:59.999Z', 'zzz') <= to).toBe(true);
    expect(shopOrderGSI2SK('2026-05-01T11:00:00.000Z', '0') <= to).toBe(false);
    expect(placedWindow('ORDER#', null, null)).toEqual({ from: 'ORDER#', to: 'ORDER#~' });
  });
});

describe('the requests of the connections', () => {
  it('reads every shard of a status view with a BETWEEN on the sort key', () => {
    const query = shopOrdersQuery('T', 'PLACED', { placedAfter: '2026-01-01T00:00:00.000Z' });
    expect(query.shardKeys).toEqual(Array.from({ length: ORDER_SHARDS }, (_, i) => `ORDERS#STATUS#PLACED#${i}`));
    expect(query.sortKeyCondition).toEqual({ between: { from: 'ORDER#2026-01-01T00:00:00.000Z', to: 'ORDER#~' } });
    expect(query.connection).toBe('Query.orders:PLACED:[2026-01-01T00:00:00.000Z,)');
  });

  it('turns a user’s window into a key condition on SK, or on LSI1SK with a status', () => {
    const plain = userOrdersQuery('T', 'ann', null, { placedBefore: '2026-02-01T00:00:00.000Z' });
    expect(plain.keyConditionExpression).toBe('PK = :pk AND SK BETWEEN :from AND :to');
    expect(plain.expressionAttributeValues[':to']).toBe('ORDER#2026-02-01T00:00:00.000Z');
    const byStatus = userOrdersQuery('T', 'ann', 'SHIPPED', { placedAfter: '2026-01-01T00:00:00.000Z' });
    expect(byStatus.keyConditionExpression).toBe('PK = :pk AND LSI1SK BETWEEN :from AND :to');
    expect(byStatus.expressionAttributeValues[':from']).toBe('STATUS#SHIPPED#2026-01-01T00:00:00.000Z');
    expect(byStatus.connection).not.toBe(userOrdersQuery('T', 'ann', 'SHIPPED').connection);
  });

  it('refuses a window that ends before it starts', () => {
    expectBadUserInput(
      () =>
        shopOrdersQuery('T', null, {
          placedAfter: '2026-02-01T00:00:00.000Z',
          placedBefore: '2026-01-01T00:00:00.000Z',
        }),
      'placedBefore',
    );
  });

  it('makes a name prefix a lower-cased begins_with and inStock a filter', () => {
    const query = categoryProductsQuery('T', 'books', { namePrefix: 'DeSi', inStock: true });
    expect(query.keyConditionExpression).toBe('GSI1PK = :pk AND begins_with(GSI1SK, :prefix)');
    expect(query.expressionAttributeValues[':prefix']).toBe('PRODUCT#desi');
    expect(query.filter).toEqual({ expression: 'stock > :noStock', values: { ':noStock': 0 } });
    expect(query.connection).toBe(
      categoryProductsQuery('T', 'books', { namePrefix: 'desi', inStock: true }).connection,
    );
    expect(query.connection).not.toBe(categoryProductsQuery('T', 'books', { namePrefix: 'desi' }).connection);
  });
});

describe('nextLimit', () => {
  it.each([
    [21, 0, 0, 500, 21],
    [19, 21, 2, 479, 200],
    [19, 21, 0, 479, 399],
    [5, 490, 1, 10, 10],
  ])('asks for %i more after %i read with %i kept (budget %i): Limit %i', (wanted, evaluated, kept, left, limit) => {
    expect(nextLimit(wanted, evaluated, kept, left)).toBe(limit);
  });
});

describe('CapacityLimiter', () => {
  it('holds writes to the rate: 10 units at 5 WCU/s wait 2 s in all', async () => {
    let now = 0;
    const slept: number[] = [];
    const limiter = new CapacityLimiter(
      { readUnitsPerSecond: 100, writeUnitsPerSecond: 5 },
      () => now,
      async (ms) => {
        slept.push(ms);
        now += ms;
      },
    );
    for (let i = 0; i < 10; i++) {
      await limiter.before('write');
      limiter.spent('write', 1);
    }
    expect(slept.reduce((a, b) => a + b, 0)).toBeCloseTo(1800);
    expect(limiter.writeUnits).toBe(10);
    await limiter.before('read');
    expect(slept).toHaveLength(9);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new CapacityLimiter({ readUnitsPerSecond: 0, writeUnitsPerSecond: 1 })).toThrow(/readUnitsPerSecond/);
  });
});
