/**
 * The answer of a planned execution: objects as arrays of values in their selection's order
 * (no result objects are built), written as JSON text directly, keys in graphql-js's order, and
 * handed on as a result that carries that text (responseSize.ts): the response reuses the text,
 * and `data` is parsed from it only if something reads it.
 */
import type { ExecutedResult } from '../../report/responseSize.js';
import type { Selection } from './plan.js';

/** One object of the answer: a value per field of its selection. */
export class ObjectNode {
  readonly values: unknown[];
  constructor(
    readonly selection: Selection,
    /** The value its fields are resolved on. */
    readonly source: unknown,
    /** Where it sits (the path of an error or of a resolver's `info`). */
    readonly parent: Container | undefined,
    readonly key: string | number,
  ) {
    this.values = new Array<unknown>(selection.fields.length);
  }
}

/** One list of the answer. */
export class ListNode {
  readonly values: unknown[] = [];
  constructor(
    readonly parent: Container,
    readonly key: string | number,
  ) {}
}

export type Container = ObjectNode | ListNode;

/** A value whose JSON another executor made (graphql-js's, for a mutation's field it completed). */
export class KnownJson {
  constructor(readonly json: string) {}
}

/** A leaf as JSON.stringify writes it (a custom scalar may serialize to any JSON value). */
function leafJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return value === null ? 'null' : (JSON.stringify(value) ?? 'null');
  }
}

function valueJson(value: unknown): string {
  if (value instanceof ObjectNode) return objectJson(value);
  if (value instanceof KnownJson) return value.json;
  if (value instanceof ListNode) {
    const { values } = value;
    let json = '[';
    for (let i = 0; i < values.length; i += 1) json += (i === 0 ? '' : ',') + valueJson(values[i]);
    return `${json}]`;
  }
  return leafJson(value);
}

function objectJson(object: ObjectNode): string {
  const { fields } = object.selection;
  const { values } = object;
  let json = '{';
  for (let i = 0; i < fields.length; i += 1) {
    json += (i === 0 ? '' : ',') + (fields[i] as { keyJson: string }).keyJson + valueJson(values[i]);
  }
  return `${json}}`;
}

/** The JSON of the answer whose root object is `root`: what JSON.stringify of graphql-js's `data` writes. */
export const answerJson = (root: ObjectNode): string => objectJson(root);

/**
 * `data` for an answer known as JSON text: an object that is the parsed text when anything reads
 * it, parsed at most once.
 */
export function dataOfJson(json: string): Record<string, unknown> {
  return new Proxy(new LazyJson(json), lazyData) as unknown as Record<string, unknown>;
}

/** The text of an answer, parsed on first use. No own properties: the proxy shows the parsed object's. */
class LazyJson {
  readonly #json: string;
  #parsed: Record<string, unknown> | undefined;
  constructor(json: string) {
    this.#json = json;
  }
  get data(): Record<string, unknown> {
    return (this.#parsed ??= JSON.parse(this.#json) as Record<string, unknown>);
  }
}

/** One handler for every lazy answer (no closures per answer): each trap reads the parsed object. */
const lazyData: ProxyHandler<LazyJson> = {
  get: (target, key): unknown => Reflect.get(target.data, key),
  has: (target, key) => Reflect.has(target.data, key),
  ownKeys: (target) => Reflect.ownKeys(target.data),
  getOwnPropertyDescriptor: (target, key) => {
    const descriptor = Reflect.getOwnPropertyDescriptor(target.data, key);
    // The target itself has no properties: a property it does not have must be reported configurable.
    return descriptor && { ...descriptor, configurable: true };
  },
  set: (target, key, value) => Reflect.set(target.data, key, value),
  deleteProperty: (target, key) => Reflect.deleteProperty(target.data, key),
  getPrototypeOf: (target) => Reflect.getPrototypeOf(target.data),
};

/** The result of an answer known as JSON text: lazy `data`, and the text the response writes as it is. */
export const resultOfJson = (json: string): ExecutedResult => ({ data: dataOfJson(json), dataJson: json });
