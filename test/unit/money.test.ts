import { describe, expect, it } from 'vitest';
import { CURRENCY_CODE, formatCents, MAX_CENTS, parseMoney, toMoney } from '../../src/money.js';
import { expectBadUserInput } from '../support/refusal.js';

describe('formatCents', () => {
  it.each([
    [0, '0.00'],
    [5, '0.05'],
    [50, '0.50'],
    [100, '1.00'],
    [8999, '89.99'],
    [123_456_789, '1234567.89'],
    [MAX_CENTS, '1000000.00'],
    [-5, '-0.05'],
    [-100, '-1.00'],
    [-8999, '-89.99'],
  ])('formats %i cents as %j', (cents, amount) => {
    expect(formatCents(cents)).toBe(amount);
  });

  it('formats negative zero as zero', () => {
    expect(formatCents(-0)).toBe('0.00');
  });

  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('refuses %d, which is not a safe integer', (cents) => {
    expect(() => formatCents(cents)).toThrow(RangeError);
  });
});

describe('toMoney', () => {
  it('carries the amount and the shop currency', () => {
    expect(toMoney(8999)).toEqual({ amount: '89.99', currencyCode: 'USD' });
    expect(CURRENCY_CODE).toBe('USD');
  });
});

describe('parseMoney', () => {
  it.each([
    ['0', 0],
    ['0.5', 50],
    ['0.05', 5],
    ['0.50', 50],
    ['1', 100],
    ['1.0', 100],
    ['89.99', 8999],
    ['1000000', MAX_CENTS],
    ['1000000.00', MAX_CENTS],
  ])('reads %j as %i cents', (amount, cents) => {
    expect(parseMoney(amount)).toBe(cents);
  });

  it.each([
    ['exponent notation', '1e3'],
    ['a negative amount', '-1'],
    ['an explicit plus sign', '+1'],
    ['three decimals', '0.001'],
    ['a leading space', ' 5'],
    ['a trailing space', '5 '],
    ['an empty string', ''],
    ['no integer part', '.5'],
    ['a trailing dot', '5.'],
    ['a decimal comma', '1,00'],
    ['a thousands separator', '1 000'],
    ['two dots', '1.2.3'],
    ['hexadecimal', '0x10'],
    ['Infinity', 'Infinity'],
    ['NaN', 'NaN'],
    ['full-width digits', '１２'],
    ['ten integer digits', '1000000000'],
  ])('refuses %s', (_case, amount) => {
    expectBadUserInput(() => parseMoney(amount), 'amount');
  });

  it.each(['1000000.01', '1000001', '999999999.99'])('refuses %j, above the maximum, naming the maximum', (amount) => {
    const error = expectBadUserInput(() => parseMoney(amount), 'amount');
    expect(error.message).toContain('1000000.00');
  });

  it('names the field it is given', () => {
    expectBadUserInput(() => parseMoney('1e3', 'input.price'), 'input.price');
  });

  it.each([0, 1, 10, 99, 100, 8999, MAX_CENTS])('reads back what formatCents wrote for %i cents', (cents) => {
    expect(parseMoney(formatCents(cents))).toBe(cents);
  });
});
