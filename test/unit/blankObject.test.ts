/**
 * The planned executor's blank answer objects (src/pipeline/execution/plan/plan.ts): each call a
 * new object with the selection's response keys, null, in its order, so that the answer's JSON
 * keeps graphql-js's key order whatever order the fields are filled in.
 */
import { describe, expect, it } from 'vitest';
import { blankObject } from '../../src/pipeline/execution/plan/plan.js';

describe('blankObject', () => {
  it('gives the keys in their order, each null, in a new object per call', () => {
    const blank = blankObject(['id', 'name', 'orders', '__typename']);
    const first = blank();
    const second = blank();
    expect(first).not.toBe(second);
    expect(Object.keys(first)).toEqual(['id', 'name', 'orders', '__typename']);
    first.orders = [];
    first.id = 'u1';
    expect(JSON.stringify(first)).toBe('{"id":"u1","name":null,"orders":[],"__typename":null}');
    expect(second.id).toBeNull();
  });

  it('makes `__proto__` an own key and leaves the prototype alone', () => {
    const data = blankObject(['a', '__proto__', 'constructor'])();
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.keys(data)).toEqual(['a', '__proto__', 'constructor']);
    expect(JSON.stringify(data)).toBe('{"a":null,"__proto__":null,"constructor":null}');
  });

  it('writes any key as a string literal, not as code', () => {
    const keys = ['a"b', 'c\\', '}; throw 1; ({', '\u2028'];
    expect(Object.keys(blankObject(keys)())).toEqual(keys);
  });

  it('gives an empty object for no keys', () => {
    expect(blankObject([])()).toEqual({});
  });
});
