/**
 * Money: integer cents inside the server, 2-decimal strings in the API ("89.99").
 * Floats never touch an amount.
 */
import { BadUserInputError } from './errors.js';

/** The shop's one currency; every amount in the API carries it. */
export const CURRENCY_CODE = 'USD';
/** The largest amount the API accepts: 1,000,000.00, far below Number.MAX_SAFE_INTEGER cents. */
export const MAX_CENTS = 100_000_000;

export interface MoneyValue {
  amount: string;
  currencyCode: string;
}

/** 8999 -> "89.99"; -5 -> "-0.05". */
export function formatCents(cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`cents must be a safe integer, got ${cents}`);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export const toMoney = (cents: number): MoneyValue => ({ amount: formatCents(cents), currencyCode: CURRENCY_CODE });

/**
 * "89.99" -> 8999. Accepts a non-negative decimal with at most 2 decimals, up to MAX_CENTS;
 * throws BAD_USER_INPUT naming `field` otherwise ("1e3", "0.001", "-1", " 5" are refused).
 */
export function parseMoney(amount: string, field = 'amount'): number {
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(amount);
  if (!match) {
    throw new BadUserInputError(`${field} must be a decimal string with at most 2 decimals, like "89.99"`, field);
  }
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  if (cents > MAX_CENTS) throw new BadUserInputError(`${field} must be at most ${formatCents(MAX_CENTS)}`, field);
  return cents;
}
