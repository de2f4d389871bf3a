/**
 * The shared tier of the response cache: answers kept in Redis, read by every instance on a miss
 * in its own memory (scale-out mode, REDIS_URL with RESPONSE_CACHE_SHARED=on).
 *
 * Nothing is evicted from Redis by key: invalidation is by **tag versions**. One counter
 * (`<prefix>seq`) numbers invalidations; a tag's key (`<prefix>t:<tag>`) holds the number and
 * wall-clock time of its last one (`<seq>:<ms>`). An entry records the counter as it was before
 * its execution began, and is valid only while every one of its tags still has a key with a
 * number no higher. So an entry is dead the moment any instance bumps one of its tags, an answer
 * whose read raced a change is dead on arrival, and an entry is never revived: a tag key that is
 * missing (expired, or evicted by `maxmemory`) makes every entry under it invalid, and is
 * recreated at the current counter, refusing the entry being stored if the counter moved.
 *
 * Bounds: every key but the counter has a TTL (an entry: what remains of the maximum age from
 * the start of its execution, or the end of an index hold-down; a tag: the maximum age, renewed
 * by each store), so a Redis with `maxmemory-policy volatile-lru` bounds the total; an entry is
 * at most `maxEntryBytes`. Each instance bumps the tags of every invalidation it hears (the
 * counter only needs to move), and skips this tier while one of its own bumps is in flight.
 *
 * Redis errors never fail a request: a read that fails or takes longer than `timeoutMs` is a
 * miss, a store or bump that fails is counted. A bump that fails leaves entries this instance
 * knows are stale looking valid, so it serves none read before the failure, as after a feed gap.
 * Those read times are wall clocks of different instances: their skew adds to that bound.
 * Not for Redis Cluster: the scripts touch keys of many slots.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** What a store needs beyond the answer. */
export interface SharedEntry {
  /** The answer's `data` as JSON. */
  json: string;
  etag: string;
  tags: readonly string[];
  public: boolean;
}

/** A valid entry read from Redis. */
export interface SharedHit extends SharedEntry {
  /** Date.now() when its execution began. */
  readStartedAt: number;
  /** How long Redis still keeps it, in ms. */
  ttlMs: number;
}

/** Where an execution began: the invalidation counter then, and the wall clock. */
export interface ReadMark {
  seq: number;
  at: number;
}

export interface SharedTierOptions {
  url: string;
  tableName: string;
  maxAgeMs: number;
  holdDownMs: number;
  maxEntryBytes: number;
  /** Which tags name a range of a global index (their answers are held down). */
  isIndexTag: (tag: string) => boolean;
  log: Logger;
  /** A read slower than this is a miss. */
  timeoutMs?: number;
}

export interface SharedTierStats {
  hits: number;
  misses: number;
  /** Entries found but invalid (a bumped or missing tag, written before a gap). */
  invalid: number;
  stores: number;
  /** Stores Redis refused (a tag changed while read). */
  refused: number;
  errors: number;
}

// KEYS[1] entry, KEYS[2] counter; ARGV[1] tag key prefix. Returns { counter, entry or '', pttl,
// version of each of the entry's tags or '' }.
const READ = `
local seq = redis.call('GET', KEYS[2]) or '0'
local e = redis.call('GET', KEYS[1])
if not e then return { seq, '', 0 } end
local out = { seq, e, redis.call('PTTL', KEYS[1]) }
local nl = string.find(e, '\\n', 1, true)
if not nl then return { seq, '', 0 } end
for tag in string.gmatch(string.sub(e, 1, nl - 1), '[^ ]+') do
  out[#out + 1] = redis.call('GET', ARGV[1] .. tag) or ''
end
return out`;

// KEYS[1] entry, KEYS[2] counter; ARGV: tag prefix, entry, read seq, entry ttl, tag ttl, now ms,
// hold-down ms, then each tag followed by 1 when the answer read it from a global index.
// Returns the entry's ttl, or 0 when refused.
const STORE = `
local readSeq = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local tagTtl = tonumber(ARGV[5])
local now = tonumber(ARGV[6])
local hold = tonumber(ARGV[7])
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
local refused = false
for i = 8, #ARGV, 2 do
  local key = ARGV[1] .. ARGV[i]
  local v = redis.call('GET', key)
  if not v then
    -- Never changed, or its key expired or was evicted: as if changed now (the next store succeeds).
    if current > readSeq then refused = true end
    redis.call('SET', key, current .. ':0', 'PX', tagTtl)
  else
    local sep = string.find(v, ':', 1, true)
    if tonumber(string.sub(v, 1, sep - 1)) > readSeq then refused = true end
    if redis.call('PTTL', key) < tagTtl then redis.call('PEXPIRE', key, tagTtl) end
    if ARGV[i + 1] == '1' then
      local heldUntil = tonumber(string.sub(v, sep + 1)) + hold
      if heldUntil > now and heldUntil - now < ttl then ttl = heldUntil - now end
    end
  end
end
if refused then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
return ttl`;

// KEYS[1] counter; ARGV: tag prefix, now ms, tag ttl, then the tags.
const BUMP = `
local s = redis.call('INCR', KEYS[1])
for i = 4, #ARGV do
  redis.call('SET', ARGV[1] .. ARGV[i], s .. ':' .. ARGV[2], 'PX', ARGV[3])
end
return s`;

type Scripted = Redis & {
  tgRead(key: string, counterKey: string, tagPrefix: string): Promise<[string, string, number, ...string[]]>;
  tgStore(entryKey: string, counterKey: string, ...args: (string | number)[]): Promise<number>;
  tgBump(counterKey: string, ...args: (string | number)[]): Promise<number>;
};

/** The entry's text: a header of tags, read seq, read start, public flag and ETag, then the JSON. */
export function encodeEntry(entry: SharedEntry, mark: ReadMark): string {
  return `${entry.tags.join(' ')}\n${mark.seq}\n${mark.at}\n${entry.public ? 1 : 0}\n${entry.etag}\n${entry.json}`;
}

/** The entry of `text`, or undefined for text this version did not write. */
export function decodeEntry(text: string): (SharedEntry & { mark: ReadMark }) | undefined {
  const fields: string[] = [];
  let from = 0;
  for (let i = 0; i < 5; i++) {
    const nl = text.indexOf('\n', from);
    if (nl < 0) return undefined;
    fields.push(text.slice(from, nl));
    from = nl + 1;
  }
  const [tags = '', seq, at, isPublic, etag = ''] = fields;
  const mark = { seq: Number(seq), at: Number(at) };
  if (!Number.isSafeInteger(mark.seq) || !Number.isFinite(mark.at)) return undefined;
  return { tags: tags ? tags.split(' ') : [], mark, public: isPublic === '1', etag, json: text.slice(from) };
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

export class SharedTier {
  private readonly redis: Scripted;
  private readonly prefix: string;
  private readonly counterKey: string;
  private readonly tagPrefix: string;
  private readonly timeoutMs: number;
  private pendingBumps = 0;
  /** Date.now() of this instance's last feed gap or failed bump: entries read before it are not served. */
  private floor = -Infinity;
  readonly stats: SharedTierStats = { hits: 0, misses: 0, invalid: 0, stores: 0, refused: 0, errors: 0 };

  constructor(private readonly options: SharedTierOptions) {
    this.prefix = `tablegraph:rc:${options.tableName}:`;
    this.counterKey = `${this.prefix}seq`;
    this.tagPrefix = `${this.prefix}t:`;
    this.timeoutMs = options.timeoutMs ?? 250;
    this.redis = new Redis(options.url, {
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times - 1, 16), 2000),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: this.timeoutMs,
      lazyConnect: true,
      connectionName: 'tablegraph-response-cache',
    }) as Scripted;
    this.redis.on('error', (error: Error) => options.log.debug({ err: error }, 'redis response cache error'));
    this.redis.defineCommand('tgRead', { numberOfKeys: 2, lua: READ });
    this.redis.defineCommand('tgStore', { numberOfKeys: 2, lua: STORE });
    this.redis.defineCommand('tgBump', { numberOfKeys: 1, lua: BUMP });
  }

  /** Connects; resolves once connected or after `waitMs` (it keeps reconnecting). */
  async start(waitMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.redis.connect().catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
    ]);
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    this.redis.disconnect();
  }

  /** Whether the tier can be read now: connected, and no bump of this instance in flight. */
  get readable(): boolean {
    return this.redis.status === 'ready' && this.pendingBumps === 0;
  }

  /**
   * The valid entry at `key` if there is one (`hit`), else the mark an execution that begins now
   * stores its answer under (`mark`; none when the tier cannot be used now). Never rejects.
   */
  async get(key: string): Promise<{ hit?: SharedHit; mark?: ReadMark }> {
    if (this.redis.status !== 'ready') return {};
    const at = Date.now();
    let found: [string, string, number, ...string[]];
    try {
      found = await this.redis.tgRead(this.prefix + key, this.counterKey, this.tagPrefix);
    } catch {
      this.stats.errors++;
      return {};
    }
    const [seq, text, ttlMs, ...versions] = found;
    const mark = { seq: Number(seq), at };
    if (text === '') {
      this.stats.misses++;
      return { mark };
    }
    const entry = decodeEntry(text);
    // `readable` again: a bump of this instance may have begun while Redis answered.
    if (!entry || entry.mark.at <= this.floor || !isCurrent(entry.mark, versions) || !this.readable) {
      this.stats.invalid++;
      return { mark };
    }
    this.stats.hits++;
    const hit = {
      json: entry.json,
      etag: entry.etag,
      tags: entry.tags,
      public: entry.public,
      readStartedAt: entry.mark.at,
      ttlMs,
    };
    return { hit, mark };
  }

  /**
   * Stores an answer whose execution began at `mark`; `readIndex`: it read a global index. Never
   * rejects; Redis refuses it when one of its tags changed after `mark`.
   */
  async set(key: string, entry: SharedEntry, mark: ReadMark, readIndex: boolean): Promise<void> {
    const now = Date.now();
    const ttl = Math.floor(this.options.maxAgeMs - (now - mark.at));
    const text = encodeEntry(entry, mark);
    if (ttl <= 0 || mark.at <= this.floor || Buffer.byteLength(text) > this.options.maxEntryBytes) return;
    const tagArgs = entry.tags.flatMap((tag) => [tag, readIndex && this.options.isIndexTag(tag) ? '1' : '0']);
    try {
      const stored = await this.redis.tgStore(
        this.prefix + key,
        this.counterKey,
        this.tagPrefix,
        text,
        mark.seq,
        ttl,
        this.options.maxAgeMs,
        now,
        this.options.holdDownMs,
        ...tagArgs,
      );
      if (stored > 0) this.stats.stores++;
      else this.stats.refused++;
    } catch {
      this.stats.errors++;
    }
  }

  /** Invalidates `tags` for every instance. Never rejects; until it is done this instance does not read the tier. */
  async bump(tags: readonly string[]): Promise<void> {
    if (tags.length === 0) return;
    this.pendingBumps++;
    try {
      await this.redis.tgBump(this.counterKey, this.tagPrefix, Date.now(), this.options.maxAgeMs, ...tags);
    } catch {
      // Entries under `tags` may still look valid: none read before now is served here.
      this.stats.errors++;
      this.gap();
    } finally {
      this.pendingBumps--;
    }
  }

  /** This instance's feed had a gap: invalidations may have been lost, entries read before now are not served. */
  gap(): void {
    this.floor = Date.now();
  }
}
