/**
 * An entry of the shared tier as it is written in Redis, and the checks it passes before an
 * instance serves it: whoever can write to Redis must not be able to plant an answer, move one
 * to another key (another viewer's scope), revive one past its expiry or strip its tags.
 *
 * The text: a header of one line per field, then the answer's JSON:
 * `<tags, space separated>\n<read seq>\n<read start, epoch ms>\n<expires at, epoch ms>\n<public 0|1>\n<etag>\n<mac>\n<json>`.
 * The tags come first: the Lua script that reads an entry takes them from its first line.
 *
 * The MAC (signedEnvelope.ts, HMAC-SHA256, `-` without a secret) covers the key (its scope with
 * it), the tags, the read mark, the expiry, the public flag, the ETag and the JSON. An entry is
 * refused when its MAC is missing or wrong (with a secret), when it has no tag, when it expired,
 * or when it is older than the maximum age, whatever Redis says of its TTL.
 */
import { macMatches, macOf } from '../../events/signedEnvelope.js';

const PURPOSE = 'response-cache-entry';

/** What a store needs beyond the answer. */
export interface SharedEntry {
  /** The answer's `data` as JSON. */
  json: string;
  etag: string;
  tags: readonly string[];
  public: boolean;
}

/** Where an execution began: the invalidation counter then, and the wall clock. */
export interface ReadMark {
  seq: number;
  at: number;
}

export interface DecodedEntry extends SharedEntry {
  mark: ReadMark;
  /** Epoch ms after which it is not served. */
  expiresAt: number;
}

export type EntryRefusal = 'malformed' | 'unsigned' | 'forged' | 'untagged' | 'expired';

const macFields = (key: string, entry: SharedEntry, mark: ReadMark, expiresAt: number) => [
  key,
  entry.tags.join(' '),
  mark.seq,
  mark.at,
  expiresAt,
  entry.public ? 1 : 0,
  entry.etag,
  entry.json,
];

/** The text stored at `key` (the full Redis key) for `entry`, read from `mark`, expiring at `expiresAt`. */
export function encodeEntry(
  key: string,
  entry: SharedEntry,
  mark: ReadMark,
  expiresAt: number,
  secret: string | undefined,
): string {
  const mac = secret ? macOf(secret, PURPOSE, macFields(key, entry, mark, expiresAt)) : '-';
  return [entry.tags.join(' '), mark.seq, mark.at, expiresAt, entry.public ? 1 : 0, entry.etag, mac, entry.json].join(
    '\n',
  );
}

/**
 * The entry in `text`, read from `key`, checked (see the module comment; `now` is the wall
 * clock, `maxAgeMs` the maximum age), or why it is refused.
 */
export function decodeEntry(
  key: string,
  text: string,
  { secret, now, maxAgeMs }: { secret: string | undefined; now: number; maxAgeMs: number },
): { entry: DecodedEntry } | { refused: EntryRefusal } {
  const fields: string[] = [];
  let from = 0;
  for (let i = 0; i < 7; i++) {
    const nl = text.indexOf('\n', from);
    if (nl < 0) return { refused: 'malformed' };
    fields.push(text.slice(from, nl));
    from = nl + 1;
  }
  const [tags = '', seq, at, expires, isPublic, etag = '', mac = ''] = fields;
  const mark = { seq: Number(seq), at: Number(at) };
  const expiresAt = Number(expires);
  if (!Number.isSafeInteger(mark.seq) || !Number.isSafeInteger(mark.at) || !Number.isSafeInteger(expiresAt))
    return { refused: 'malformed' };
  const entry: DecodedEntry = {
    tags: tags ? tags.split(' ') : [],
    mark,
    expiresAt,
    public: isPublic === '1',
    etag,
    json: text.slice(from),
  };
  if (secret) {
    if (mac === '-') return { refused: 'unsigned' };
    if (!macMatches(secret, PURPOSE, macFields(key, entry, mark, expiresAt), mac)) return { refused: 'forged' };
  }
  // An entry without tags could never be invalidated.
  if (entry.tags.length === 0) return { refused: 'untagged' };
  if (now >= expiresAt || now - mark.at > maxAgeMs) return { refused: 'expired' };
  return { entry };
}

/**
 * Whether an entry read at `mark` is still valid given its tags' versions (`<seq>:<ms>`, or ''
 * for a missing key): every tag must exist, unchanged since the read began.
 */
export function isCurrent(mark: ReadMark, versions: readonly string[]): boolean {
  for (const version of versions) {
    if (version === '') return false;
    const seq = Number(version.slice(0, version.indexOf(':')));
    if (!(seq <= mark.seq)) return false;
  }
  return true;
}
