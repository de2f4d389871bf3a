/** What the codecs share: the item type and how an attribute is read back, checked. */

export type Item = Record<string, unknown>;

/** Raised when an item in the table does not have the shape this code wrote: a bug or foreign data. */
export class CorruptItemError extends Error {
  override name = 'CorruptItemError';
}

export function str(item: Item, name: string): string {
  const value = item[name];
  if (typeof value !== 'string') throw new CorruptItemError(`item attribute ${name} is not a string`);
  return value;
}

export function int(item: Item, name: string): number {
  const value = item[name];
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new CorruptItemError(`item attribute ${name} is not an integer`);
  }
  return value;
}
