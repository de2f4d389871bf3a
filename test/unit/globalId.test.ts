import { describe, expect, it } from 'vitest';
import { fromGlobalId, globalIdOf, toGlobalId } from '../../src/graphql/globalId.js';
import type { NodeType } from '../../src/graphql/globalId.js';
import { aProduct, aUser, anOrder } from '../support/factories.js';
import { expectBadUserInput } from '../support/refusal.js';

const encode = (text: string) => Buffer.from(text).toString('base64url');

describe('global ids', () => {
  it.each<[NodeType, string]>([
    ['User', 'alice'],
    ['Order', 'demo-alice-001'],
    ['Product', 'book_ddia'],
    ['Product', 'x'.repeat(64)],
  ])('round-trips %s %s', (type, id) => {
    expect(fromGlobalId(toGlobalId(type, id))).toEqual({ type, id });
  });

  it('keeps the documented encoding, so ids stored by clients stay valid', () => {
    expect(toGlobalId('User', 'alice')).toBe('VXNlcjphbGljZQ');
  });

  it('gives every kind of node the id of its own key', () => {
    const user = aUser({ userId: 'alice' });
    const product = aProduct({ productId: 'tent-2p' });
    const order = anOrder(user, [product], { orderId: 'o-1' });
    expect([globalIdOf(user), globalIdOf(order), globalIdOf(product)]).toEqual([
      toGlobalId('User', 'alice'),
      toGlobalId('Order', 'o-1'),
      toGlobalId('Product', 'tent-2p'),
    ]);
  });

  it('gives the same key of different types different ids', () => {
    expect(new Set([toGlobalId('User', 'x'), toGlobalId('Order', 'x'), toGlobalId('Product', 'x')]).size).toBe(3);
  });

  it.each([
    ['an unknown type', encode('Secret:alice')],
    ['a lower-case type', encode('user:alice')],
    ['a model name', encode('UserModel:alice')],
    ['no type', encode(':alice')],
    ['no separator', encode('alice')],
  ])('refuses %s', (_case, globalId) => {
    expectBadUserInput(() => fromGlobalId(globalId), 'id');
  });

  it.each([
    ['a # that could forge a key', encode('User:alice#PROFILE')],
    ['an empty id', encode('User:')],
    ['a space', encode('User:al ice')],
    ['a second separator', encode('User:a:b')],
    ['a control character', encode('Order:o\u00001')],
    ['65 characters', encode(`Product:${'x'.repeat(65)}`)],
  ])('refuses a raw id with %s inside', (_case, globalId) => {
    expectBadUserInput(() => fromGlobalId(globalId), 'id');
  });

  it.each([
    ['padding', 'VXNlcjphbGljZQ=='],
    ['the unused low bits of the last character set', 'VXNlcjphbGljZR'],
    ['a dangling character that decodes to nothing', 'VXNlcjphbGljZ'],
    ['inner whitespace', 'VXNlcjph bGljZQ'],
    ['a trailing newline', 'VXNlcjphbGljZQ\n'],
  ])('refuses a non-canonical encoding with %s', (_case, globalId) => {
    expectBadUserInput(() => fromGlobalId(globalId), 'id');
  });

  it.each([
    ['an empty string', ''],
    ['129 characters', 'A'.repeat(129)],
    ['a megabyte', 'A'.repeat(1_000_000)],
  ])('refuses %s', (_case, globalId) => {
    expectBadUserInput(() => fromGlobalId(globalId), 'id');
  });

  it('names the argument it is given', () => {
    expectBadUserInput(() => fromGlobalId('nope', 'ids'), 'ids');
  });
});
