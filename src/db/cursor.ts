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
import { BadUserInputError } from '../errors.js';

const VERSION = 'c1';
const SIGNATURE_BYTES = 16;
/** Far above any real cursor; bounds the work spent on hostile input. */
const MAX_CURSOR_LENGTH = 1024;
/**
 * The cursors issued lately are remembered, in two generations of at most this many (a few MB
 * in all): a page read again (a category's, a product's reviews) issues the same cursors, and a
 * look-up costs far less than an HMAC.
 */
const ISSUED_PER_GENERATION = 8192;

export type CursorKey = Record<string, string>;

export class CursorCodec {
  /**
   * The cursors this codec issued lately, by connection, then by key (only issued ones: no client
   * input): the newer generation, and the one before it, whose cursors move to the newer on use.
   * Two levels, not one text joining both: a look-up hashes the connection and the key's JSON
   * apart, and builds no longer text per edge.
   */
  private issued = new Map<string, Map<string, string>>();
  private issuedCount = 0;
  private issuedBefore = new Map<string, Map<string, string>>();

  constructor(private readonly secret: string) {
    if (!secret) throw new Error('CursorCodec needs a non-empty secret');
  }

  private sign(signed: string): Buffer {
    return createHmac('sha256', this.secret).update(signed).digest().subarray(0, SIGNATURE_BYTES);
  }

  /** Encodes `key` (the item's table and index key attributes) as a cursor of `connection`. */
  encode(connection: string, key: CursorKey): string {
    const json = JSON.stringify(key);
    const known = this.issued.get(connection)?.get(json);
    if (known !== undefined) return known;
    let cursor = this.issuedBefore.get(connection)?.get(json);
    if (cursor === undefined) {
      const payload = Buffer.from(json).toString('base64url');
      cursor = `${VERSION}.${payload}.${this.sign(signedText(connection, payload)).toString('base64url')}`;
    }
    if (this.issuedCount >= ISSUED_PER_GENERATION) {
      this.issuedBefore = this.issued;
      this.issued = new Map();
      this.issuedCount = 0;
    }
    let ofConnection = this.issued.get(connection);
    if (ofConnection === undefined) {
      ofConnection = new Map<string, string>();
      this.issued.set(connection, ofConnection);
    }
    ofConnection.set(json, cursor);
    this.issuedCount += 1;
    return cursor;
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
