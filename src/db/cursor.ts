/**
 * Page cursors: the DynamoDB key of an edge's item (what ExclusiveStartKey takes), made opaque,
 * versioned, signed with CURSOR_SECRET and bound to the connection that issued it.
 *
 * Format: `<version>.<base64url(JSON key)>.<base64url(HMAC-SHA256 truncated to 128 bits)>`,
 * where the HMAC covers the version, the connection id and the payload. A cursor altered by a
 * client, or taken from another connection (another user's orders, another category), fails
 * the HMAC check and is refused before anything reaches DynamoDB.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { BadUserInputError } from '../errors.js';

const VERSION = 'c1';
const SIGNATURE_BYTES = 16;
/** Far above any real cursor; bounds the work spent on hostile input. */
const MAX_CURSOR_LENGTH = 1024;
/**
 * The cursors issued lately, by what their HMAC covers (about 150 characters each): a page read
 * again (a category's, a product's reviews) issues the same cursors, and a look-up costs far less
 * than an HMAC. Bounded by the characters of those texts, about 13,000 cursors.
 */
const ISSUED_CHARS = 2_000_000;

export type CursorKey = Record<string, string>;

export class CursorCodec {
  /** Signatures of the cursors this codec issued, by the text they sign (only issued ones: no client input). */
  private readonly issued = new LRUCache<string, string>({
    maxSize: ISSUED_CHARS,
    sizeCalculation: (_signature, signed) => signed.length,
  });

  constructor(private readonly secret: string) {
    if (!secret) throw new Error('CursorCodec needs a non-empty secret');
  }

  private sign(signed: string): Buffer {
    return createHmac('sha256', this.secret).update(signed).digest().subarray(0, SIGNATURE_BYTES);
  }

  /** Encodes `key` (the item's table and index key attributes) as a cursor of `connection`. */
  encode(connection: string, key: CursorKey): string {
    const payload = Buffer.from(JSON.stringify(key)).toString('base64url');
    const signed = signedText(connection, payload);
    let signature = this.issued.get(signed);
    if (signature === undefined) {
      signature = this.sign(signed).toString('base64url');
      this.issued.set(signed, signature);
    }
    return `${VERSION}.${payload}.${signature}`;
  }

  /**
   * Returns the key inside `cursor` if this server signed it for `connection` and it holds
   * exactly `attributes`, all strings. Throws BAD_USER_INPUT naming `argumentName`
   * (`after` or `before`) otherwise.
   */
  decode(connection: string, cursor: string, attributes: readonly string[], argumentName: string): CursorKey {
    const refuse = (): never => {
      throw new BadUserInputError(`${argumentName} is not a cursor this connection issued`, argumentName);
    };
    if (cursor.length > MAX_CURSOR_LENGTH) return refuse();
    const [version, payload, signature, ...rest] = cursor.split('.');
    if (version !== VERSION || !payload || !signature || rest.length > 0) return refuse();
    // Compare the text, not decoded bytes: base64url decoding ignores stray characters and
    // padding, and a cursor must have exactly one spelling.
    const given = Buffer.from(signature);
    const expected = Buffer.from(this.sign(signedText(connection, payload)).toString('base64url'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse();
    let key: unknown;
    try {
      key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return refuse();
    }
    // A signed cursor always has this shape; checking it anyway keeps a leaked secret from
    // turning into arbitrary ExclusiveStartKeys.
    if (typeof key !== 'object' || key === null || Array.isArray(key)) return refuse();
    const entries = Object.entries(key);
    if (entries.length !== attributes.length) return refuse();
    for (const [name, value] of entries) {
      if (!attributes.includes(name) || typeof value !== 'string') return refuse();
    }
    return key as CursorKey;
  }
}

/** What a cursor's HMAC covers: the version, the connection and the payload. */
const signedText = (connection: string, payload: string): string => `${VERSION}\n${connection}\n${payload}`;
