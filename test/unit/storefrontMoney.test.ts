/**
 * The storefront's money (examples/storefront/src/money.ts): the API's decimal strings added up
 * and multiplied in whole cents, never in floating point.
 */
import { describe, expect, it } from 'vitest';
import {
  formatMoney,
  fromCents,
  lineTotal,
  parsePriceInput,
  sum,
  toCents,
} from '../../examples/storefront/src/money.js';

describe("the storefront's money", () => {
  it('multiplies and adds in cents where floating point would drift', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(lineTotal('19.99', 3)).toBe('59.97');
    expect(sum(['0.10', '0.20'])).toBe('0.30');
    expect(sum(['118.00', '59.97', '0.03'])).toBe('178.00');
    expect(sum([])).toBe('0.00');
  });

  it('reads and writes the API amounts exactly', () => {
    expect(toCents('89.99')).toBe(8999);
    expect(toCents('0.05')).toBe(5);
    expect(fromCents(5)).toBe('0.05');
    expect(fromCents(123456789)).toBe('1234567.89');
    expect(() => toCents('89.9')).toThrow(/not a money amount/);
    expect(() => toCents('1e3')).toThrow(/not a money amount/);
  });

  it('shows amounts with the currency and thousands separators, from the string itself', () => {
    expect(formatMoney('1234567.89')).toBe('$1,234,567.89');
    expect(formatMoney('0.50', 'EUR')).toBe('€0.50');
  });

  it('takes a price a person typed, or nothing', () => {
    expect(parsePriceInput('20')).toBe('20.00');
    expect(parsePriceInput(' 19.9 ')).toBe('19.90');
    expect(parsePriceInput('007.05')).toBe('7.05');
    expect(parsePriceInput('19.999')).toBeUndefined();
    expect(parsePriceInput('-1')).toBeUndefined();
    expect(parsePriceInput('abc')).toBeUndefined();
  });
});
