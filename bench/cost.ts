/**
 * What Amazon DynamoDB would bill, computed from item sizes. DynamoDB Local reports consumed
 * capacity, but a flat figure for transactions and 0 for missing keys, so the benchmark models
 * the bill from the items that actually crossed the wire (see costProxy.ts).
 *
 * Item size (DynamoDB developer guide, "Item sizes and formats"): the sum over attributes of
 * the UTF-8 length of the name plus the size of the value. Strings: UTF-8 bytes. Numbers:
 * 1 byte per two significant digits plus 1. Binary: raw bytes. Boolean and null: 1 byte.
 * List and map: 3 bytes plus, per element, its value (and, for a map, its name) plus 1 byte.
 *
 * Units: a read unit is one strongly consistent read of up to 4 KB (half for eventually
 * consistent), a write unit one write of up to 1 KB; both doubled inside transactions.
 * GetItem and BatchGetItem round every item up on its own (a missing key still costs the
 * minimum); a Query sums the sizes of all items it read and rounds the total once.
 * Writes cost the larger of the item before and after. Each secondary index holding the item
 * costs one more (plain, non-transactional) write of the index entry — two when the write
 * moves the item's index key — which is modelled with the item's size (projection ALL).
 */

/** An attribute value in DynamoDB's JSON wire format, e.g. `{ "S": "abc" }`. */
export type WireValue = { [type: string]: unknown };
export type WireItem = Record<string, WireValue>;

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

function numberSize(text: string): number {
  const digits = text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

export function valueSize(value: WireValue): number {
  const [type, raw] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return utf8(String(raw));
    case 'N':
      return numberSize(String(raw));
    case 'B':
      return Buffer.from(String(raw), 'base64').length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (raw as string[]).reduce((sum, s) => sum + utf8(s), 0);
    case 'NS':
      return (raw as string[]).reduce((sum, n) => sum + numberSize(n), 0);
    case 'BS':
      return (raw as string[]).reduce((sum, b) => sum + Buffer.from(b, 'base64').length, 0);
    case 'L':
      return 3 + (raw as WireValue[]).reduce((sum, element) => sum + valueSize(element) + 1, 0);
    case 'M':
      return (
        3 +
        Object.entries(raw as WireItem).reduce((sum, [name, element]) => sum + utf8(name) + valueSize(element) + 1, 0)
      );
    default:
      throw new Error(`unknown attribute type ${type}`);
  }
}

export function itemSize(item: WireItem): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += utf8(name) + valueSize(value);
  return size;
}

export const READ_UNIT_BYTES = 4096;
export const WRITE_UNIT_BYTES = 1024;

/** One point read (GetItem, or one key of a BatchGetItem); `size` undefined for a missing item. */
export const pointReadUnits = (size: number | undefined, consistent: boolean): number =>
  Math.max(1, Math.ceil((size ?? 0) / READ_UNIT_BYTES)) * (consistent ? 1 : 0.5);

/** A Query: the sizes of every item read, summed, rounded up once. */
export const queryReadUnits = (sizes: readonly number[], consistent: boolean): number =>
  Math.max(1, Math.ceil(sizes.reduce((a, b) => a + b, 0) / READ_UNIT_BYTES)) * (consistent ? 1 : 0.5);

/** The table write of one item: the larger of its sizes before and after. */
export const tableWriteUnits = (before: number | undefined, after: number | undefined, transactional: boolean) =>
  Math.max(1, Math.ceil(Math.max(before ?? 0, after ?? 0) / WRITE_UNIT_BYTES)) * (transactional ? 2 : 1);

/** The secondary indexes of the table under test, by the attributes that form their key. */
export const INDEXES: readonly { name: string; keys: readonly string[] }[] = [
  { name: 'GSI1', keys: ['GSI1PK', 'GSI1SK'] },
  { name: 'LSI1', keys: ['PK', 'LSI1SK'] },
];

const indexKey = (item: WireItem | undefined, keys: readonly string[]): string | undefined => {
  if (!item) return undefined;
  const parts: string[] = [];
  for (const key of keys) {
    const value = item[key];
    if (!value) return undefined;
    parts.push(JSON.stringify(value));
  }
  return parts.join('|');
};

/** Index writes caused by changing one item from `before` to `after` (either may be absent). */
export function indexWriteUnits(before: WireItem | undefined, after: WireItem | undefined): number {
  let units = 0;
  for (const index of INDEXES) {
    const old = indexKey(before, index.keys);
    const now = indexKey(after, index.keys);
    const unitsOf = (item: WireItem | undefined) =>
      Math.max(1, Math.ceil((item ? itemSize(item) : 0) / WRITE_UNIT_BYTES));
    if (old === undefined && now === undefined) continue;
    if (old !== undefined && now !== undefined && old === now) units += Math.max(unitsOf(before), unitsOf(after));
    else units += (old !== undefined ? unitsOf(before) : 0) + (now !== undefined ? unitsOf(after) : 0);
  }
  return units;
}

/** What one DynamoDB call would cost on Amazon DynamoDB. */
export interface BilledCall {
  operation: string;
  readUnits: number;
  /** The same reads if every one were eventually consistent. */
  eventualReadUnits: number;
  /** Table writes (doubled in transactions). */
  writeUnits: number;
  /** Writes to GSI1/LSI1 caused by the table writes. */
  indexWriteUnits: number;
  /** Items read or written, with their sizes: the evidence behind the units. */
  itemBytes: number[];
  /** Bytes of the HTTP response body DynamoDB sent (what the SDK had to parse). */
  wireBytes: number;
}

export interface BilledTotal {
  calls: number;
  readUnits: number;
  eventualReadUnits: number;
  wireBytes: number;
  writeUnits: number;
  indexWriteUnits: number;
  byOperation: Record<string, number>;
}

export function sumBilled(calls: readonly BilledCall[]): BilledTotal {
  const total: BilledTotal = {
    calls: 0,
    readUnits: 0,
    eventualReadUnits: 0,
    wireBytes: 0,
    writeUnits: 0,
    indexWriteUnits: 0,
    byOperation: {},
  };
  for (const call of calls) {
    total.calls += 1;
    total.readUnits += call.readUnits;
    total.eventualReadUnits += call.eventualReadUnits;
    total.wireBytes += call.wireBytes;
    total.writeUnits += call.writeUnits;
    total.indexWriteUnits += call.indexWriteUnits;
    total.byOperation[call.operation] = (total.byOperation[call.operation] ?? 0) + 1;
  }
  return total;
}
