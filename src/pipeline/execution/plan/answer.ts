/**
 * The answer of a planned execution: plain objects and arrays, keys in graphql-js's order, built
 * as the fields complete and written as JSON text by one JSON.stringify (no text per value), then
 * handed on as a result that carries that text (responseSize.ts): the response reuses the text,
 * and `data` is parsed from it only if something reads it.
 */
import type { ExecutedResult } from '../../report/responseSize.js';
import type { Selection } from './plan.js';

/**
 * One object of the answer: `data` is the object itself, its keys put in its selection's order
 * as its fields are resolved (a field whose value comes with a later round holds `null` until
 * then), so that the whole answer is one JSON.stringify.
 */
export class ObjectNode {
  readonly data: Record<string, unknown>;
  constructor(
    readonly selection: Selection,
    /** The value its fields are resolved on. */
    readonly source: unknown,
    /** Where it sits (the path of an error or of a resolver's `info`). */
    readonly parent: Container | undefined,
    readonly key: string | number,
  ) {
    // The root starts empty: a mutation's root fields are put one by one, and an answer cut short
    // has only those done. Any other object has its selection's keys from the start (plan.ts).
    this.data = parent === undefined ? {} : selection.blank();
  }
}

/** One list of the answer: `values` is the array itself. */
export class ListNode {
  readonly values: unknown[];
  constructor(
    readonly parent: Container,
    readonly key: string | number,
    length: number,
  ) {
    this.values = new Array<unknown>(length);
  }
}

export type Container = ObjectNode | ListNode;

/**
 * Puts `value` at `key` of `container`: a response key of an object, an index of a list. A value
 * is what JSON.stringify writes as graphql-js's `data` would be written (a leaf as serialized, an
 * object's or a list's own `data` or `values`).
 */
export function put(container: Container, key: string | number, value: unknown): void {
  if (container instanceof ListNode) {
    container.values[key as number] = value;
  } else if (key === '__proto__') {
    // An alias may be `__proto__`: an own property, as in graphql-js's objects (and JSON.parse's).
    Object.defineProperty(container.data, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    container.data[key] = value;
  }
}

/** The JSON of the answer whose root object is `root`: what JSON.stringify of graphql-js's `data` writes. */
export const answerJson = (root: ObjectNode): string => JSON.stringify(root.data);

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
