/**
 * The reads' own conversion between DynamoDB's AttributeValue maps and plain items, in place of
 * the document client's on the hot read paths (BatchGetItem and Query: batchGet.ts, the page
 * reads, the item-collection reads). The document client converts every output through a
 * generic walk (an `Object.entries` array per attribute and per value, an accumulator per level)
 * and costs two more middleware frames per call; these reads send the low-level commands and
 * convert here, in one tight pass per item (docs/decisions/own-unmarshalling.md).
 *
 * `unmarshallItem` gives exactly what the document client gives with the options the process
 * uses (client.ts: numbers not wrapped): S a string, N a number (a finite number past the safe
 * integers a BigInt, one a BigInt cannot hold an Error with the SDK's message), BOOL, NULL null,
 * B and BS bytes, L an array, M an object, SS/NS/BS a Set. The codecs then check each attribute
 * as before (`int` refuses a BigInt and a fraction: money stays integer cents).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Item } from '../table/codecs.js';
import type { ItemKey } from '../table/keys.js';

export type AttributeMap = Record<string, AttributeValue>;

/** What the document client passes its marshalling (client.ts): the values the reads send convert the same way. */
const MARSHALL_OPTIONS = { removeUndefinedValues: true, convertEmptyValues: false } as const;

/** `values` (expression values, a key, a start key) as an AttributeValue map, as the document client sends them. */
export const toAttributeMap = (values: Record<string, unknown>): AttributeMap => marshall(values, MARSHALL_OPTIONS);

/** An item's key as an AttributeValue map. */
export const keyAttributes = (key: ItemKey): AttributeMap => ({ PK: { S: key.PK }, SK: { S: key.SK } });

/** A number as the document client reads it without wrapNumbers (util-dynamodb's convertNumber). */
function toNumber(text: string): number | bigint {
  const value = Number(text);
  if ((value > Number.MAX_SAFE_INTEGER || value < Number.MIN_SAFE_INTEGER) && Number.isFinite(value)) {
    try {
      return BigInt(text);
    } catch {
      throw new Error(`${text} can't be converted to BigInt. Set options.wrapNumbers to get string value.`);
    }
  }
  return value;
}

/** One AttributeValue as the document client reads it: the first member that is set decides. */
function toNative(value: AttributeValue): unknown {
  const av = value as unknown as Record<string, unknown>;
  for (const type in av) {
    const member = av[type];
    if (member === undefined) continue;
    switch (type) {
      case 'S':
      case 'B':
        return member;
      case 'N':
        return toNumber(member as string);
      case 'NULL':
        return null;
      case 'BOOL':
        return Boolean(member);
      case 'M':
        return unmarshallItem(member as AttributeMap);
      case 'L': {
        const list = member as AttributeValue[];
        const out = new Array<unknown>(list.length);
        for (let i = 0; i < list.length; i += 1) out[i] = toNative(list[i] as AttributeValue);
        return out;
      }
      case 'SS':
      case 'BS':
        return new Set(member as unknown[]);
      case 'NS':
        return new Set((member as string[]).map(toNumber));
      default:
        throw new Error(`Unsupported type passed: ${type}`);
    }
  }
  throw new Error(`No value defined: ${JSON.stringify(value)}`);
}

/** An item (or a key) from its AttributeValue map. */
export function unmarshallItem(map: AttributeMap): Item {
  const item: Item = {};
  for (const name in map) item[name] = toNative(map[name] as AttributeValue);
  return item;
}

/** Every item of a read's output (absent: none). */
export function unmarshallItems(maps: readonly AttributeMap[] | undefined): Item[] {
  if (!maps) return [];
  const items = new Array<Item>(maps.length);
  for (let i = 0; i < maps.length; i += 1) items[i] = unmarshallItem(maps[i] as AttributeMap);
  return items;
}
