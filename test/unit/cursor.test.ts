import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../src/db/cursor.js';
import type { CursorKey } from '../../src/db/cursor.js';
import { expectBadUserInput } from '../support/refusal.js';

const codec = new CursorCodec('secret-a');
const CONNECTION = 'User.orders:alice';
const TABLE_KEY = ['PK', 'SK'] as const;
const KEY: CursorKey = { PK: 'USER#alice', SK: 'ORDER#2026-06-01T12:00:00.000Z#order-1' };
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const cursor = codec.encode(CONNECTION, KEY);
const [version, payload, signature] = cursor.split('.') as [string, string, string];

const decode = (value: string, attributes: readonly string[] = TABLE_KEY, connection = CONNECTION) =>
  codec.decode(connection, value, attributes, 'after');
const expectRefused = (value: string, attributes: readonly string[] = TABLE_KEY, connection = CONNECTION) =>
  expectBadUserInput(() => decode(value, attributes, connection), 'after');
/** Every string that differs from `text` in exactly one base64url character. */
const oneCharacterChanges = (text: string): string[] =>
  [...text].flatMap((original, i) =>
    [...BASE64URL].filter((c) => c !== original).map((c) => text.slice(0, i) + c + text.slice(i + 1)),
  );
/** The candidates that decode() accepted instead of refusing. */
const accepted = (candidates: string[]): string[] =>
  candidates.filter((candidate) => {
    try {
      decode(candidate);
      return true;
    } catch {
      return false;
    }
  });

describe('CursorCodec', () => {
  it.each([
    ['a table key', CONNECTION, TABLE_KEY, KEY],
    [
      'an LSI key',
      `${CONNECTION}:SHIPPED`,
      ['PK', 'SK', 'LSI1SK'],
      { ...KEY, LSI1SK: 'STATUS#SHIPPED#2026-06-01T12:00:00.000Z#order-1' },
    ],
    [
      'a GSI key',
      'Query.products:books',
      ['PK', 'SK', 'GSI1PK', 'GSI1SK'],
      { PK: 'PRODUCT#p1', SK: 'DETAILS', GSI1PK: 'CATEGORY#books', GSI1SK: 'PRODUCT#tent#p1' },
    ],
    ['a key with non-ASCII text', CONNECTION, TABLE_KEY, { PK: 'USER#alice', SK: 'ORDER#ünïcødé ✓' }],
  ])('round-trips %s', (_case, connection, attributes, key) => {
    const encoded = codec.encode(connection, key);
    expect(codec.decode(connection, encoded, attributes, 'after')).toEqual(key);
  });

  it('issues an opaque, URL-safe cursor that does not show the key', () => {
    expect(cursor).toMatch(/^[A-Za-z0-9_.-]+$/);
    expect(cursor).not.toContain('USER');
    expect(cursor).not.toContain('alice');
  });

  it('issues the same cursor for the same key of the same connection', () => {
    expect(codec.encode(CONNECTION, { ...KEY })).toBe(cursor);
  });

  it('refuses a cursor with a changed payload', () => {
    const otherPayload = Buffer.from(JSON.stringify({ ...KEY, PK: 'USER#bob' })).toString('base64url');
    expectRefused(`${version}.${otherPayload}.${signature}`);
  });

  it('refuses every single-character change to the payload', () => {
    expect(accepted(oneCharacterChanges(payload).map((p) => `${version}.${p}.${signature}`))).toEqual([]);
  });

  it('refuses a cursor with a changed signature', () => {
    const changed = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    expectRefused(`${version}.${payload}.${changed}`);
  });

  it('refuses every single-character change to the signature', () => {
    expect(accepted(oneCharacterChanges(signature).map((s) => `${version}.${payload}.${s}`))).toEqual([]);
  });

  it.each([
    ['"=" padding', `${signature}=`],
    ['"==" padding', `${signature}==`],
    ['a trailing "!"', `${signature}!`],
    ['a trailing space', `${signature} `],
    ['a trailing newline', `${signature}\n`],
    ['a "!" inside', `${signature.slice(0, 5)}!${signature.slice(5)}`],
    ['a "%" inside', `${signature.slice(0, 5)}%${signature.slice(5)}`],
    ['a space inside', `${signature.slice(0, 5)} ${signature.slice(5)}`],
    ['one character too many', `${signature}A`],
    ['one character too few', signature.slice(0, -1)],
  ])('refuses the signature spelled with %s', (_case, spelling) => {
    expectRefused(`${version}.${payload}.${spelling}`);
  });

  it('refuses a cursor issued for another connection', () => {
    expectRefused(codec.encode('User.orders:bob', KEY));
  });

  it('refuses a cursor signed with another secret', () => {
    expectRefused(new CursorCodec('secret-b').encode(CONNECTION, KEY));
  });

  it.each([
    ['an attribute missing', TABLE_KEY, { PK: KEY.PK }],
    ['an extra attribute', TABLE_KEY, { ...KEY, LSI1SK: 'STATUS#PLACED#x' }],
    ['another attribute in place of one', TABLE_KEY, { PK: KEY.PK, GSI1SK: 'PRODUCT#x' }],
    ['the table key where the index key is expected', ['PK', 'SK', 'LSI1SK'], KEY],
  ])('refuses a signed cursor with %s', (_case, attributes, key) => {
    expectRefused(codec.encode(CONNECTION, key as CursorKey), attributes);
  });

  it.each([
    ['a number', 1],
    ['null', null],
    ['a boolean', true],
    ['a list', ['USER#alice']],
    ['an attribute value map', { S: 'USER#alice' }],
  ])('refuses a signed cursor whose key holds %s', (_case, value) => {
    expectRefused(codec.encode(CONNECTION, { ...KEY, PK: value } as unknown as CursorKey));
  });

  it.each([
    ['null', null],
    ['a list', ['USER#alice', 'PROFILE']],
    ['a string', 'USER#alice'],
    ['a number', 42],
  ])('refuses a signed cursor whose payload is %s', (_case, value) => {
    expectRefused(codec.encode(CONNECTION, value as unknown as CursorKey));
  });

  it.each([
    ['an empty string', ''],
    ['a word', 'garbage'],
    ['the version alone', 'c1'],
    ['empty parts', 'c1..'],
    ['no signature', `c1.${payload}`],
    ['an empty signature', `c1.${payload}.`],
    ['no payload', `c1..${signature}`],
    ['another version', `c2.${payload}.${signature}`],
    ['a fourth part', `${cursor}.x`],
    ['the key as plain base64url JSON', Buffer.from(JSON.stringify(KEY)).toString('base64url')],
    ['the key as plain JSON', JSON.stringify(KEY)],
    ['non-ASCII text', 'c1.☃.☃'],
  ])('refuses %s', (_case, value) => {
    expectRefused(value);
  });

  it('refuses a correctly signed cursor longer than 1024 characters', () => {
    const long = codec.encode(CONNECTION, { ...KEY, SK: 'x'.repeat(1000) });
    expect(long.length).toBeGreaterThan(1024);
    expectRefused(long);
  });

  it('refuses a megabyte of input', () => {
    expectRefused('c1.' + 'A'.repeat(1_000_000) + '.' + signature);
  });

  it('names the argument it is given', () => {
    expectBadUserInput(() => codec.decode(CONNECTION, 'garbage', TABLE_KEY, 'before'), 'before');
  });

  it('refuses to work without a secret', () => {
    expect(() => new CursorCodec('')).toThrow(/secret/);
  });

  it('issues a cursor again from memory exactly as it signs it, per connection and per secret', () => {
    const issuing = new CursorCodec('secret-a');
    const first = issuing.encode(CONNECTION, KEY);
    // The second time the signature is remembered: the same text as a codec that never issued it.
    expect(issuing.encode(CONNECTION, KEY)).toBe(first);
    expect(new CursorCodec('secret-a').encode(CONNECTION, KEY)).toBe(first);
    expect(decode(issuing.encode(CONNECTION, KEY))).toEqual(KEY);
    // Another connection's cursor of the same key, or another secret's, is signed for itself.
    const other = issuing.encode(`${CONNECTION}:SHIPPED`, KEY);
    expect(other.split('.')[2]).not.toBe(first.split('.')[2]);
    expect(() => decode(other)).toThrow();
    expect(new CursorCodec('secret-b').encode(CONNECTION, KEY)).not.toBe(first);
    // Past two generations of other cursors it is forgotten, and signed again the same.
    for (let i = 0; i < 2 * 8192 + 1; i += 1) issuing.encode(CONNECTION, { ...KEY, SK: `ORDER#${i}` });
    expect(issuing.encode(CONNECTION, KEY)).toBe(first);
    expect(issuing.encode(CONNECTION, { ...KEY, SK: 'ORDER#0' })).toBe(
      new CursorCodec('secret-a').encode(CONNECTION, { ...KEY, SK: 'ORDER#0' }),
    );
  });
});
