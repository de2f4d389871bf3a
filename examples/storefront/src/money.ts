/**
 * Money as the API sends it: decimal strings with two decimals ("89.99"). Sums and line totals are
 * worked out in whole cents, never in floating point, and shown as decimal strings again.
 */

const AMOUNT = /^(\d+)\.(\d{2})$/;

/** "89.99" → 8999. Throws on anything else: the API never sends another shape. */
export function toCents(amount: string): number {
  const match = AMOUNT.exec(amount);
  if (!match) throw new Error(`not a money amount: "${amount}"`);
  return Number(match[1]) * 100 + Number(match[2]);
}

/** 8999 → "89.99". */
export function fromCents(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new Error(`not a number of cents: ${cents}`);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** The price of `quantity` units at `unitPrice`. */
export const lineTotal = (unitPrice: string, quantity: number): string => fromCents(toCents(unitPrice) * quantity);

/** The sum of amounts. */
export const sum = (amounts: readonly string[]): string =>
  fromCents(amounts.reduce((total, a) => total + toCents(a), 0));

const formats = new Map<string, Intl.NumberFormat>();

/** "89.99" in USD → "$89.99", for display; the digits are the string's own, not a float's. */
export function formatMoney(amount: string, currencyCode = 'USD'): string {
  let format = formats.get(currencyCode);
  if (!format) {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currencyCode });
    formats.set(currencyCode, format);
  }
  const symbol = format.formatToParts(0).find((part) => part.type === 'currency')?.value ?? `${currencyCode} `;
  const [whole = '0', cents = '00'] = amount.split('.');
  return `${symbol}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
}

/** A price a person typed ("20", "20.5", "20.50"): as the API's decimal string, or undefined if it is not one. */
export function parsePriceInput(text: string): string | undefined {
  const match = /^\s*(\d{1,7})(?:\.(\d{1,2}))?\s*$/.exec(text);
  if (!match) return undefined;
  return `${Number(match[1])}.${(match[2] ?? '').padEnd(2, '0')}`;
}
