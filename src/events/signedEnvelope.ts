/**
 * The one trust rule for what a process reads from Redis: change events, invalidations and
 * heartbeats travel in a signed envelope, and cache entries carry a MAC made here. With a
 * signing secret (REDIS_SIGNING_SECRET) a reader acts only on what a holder of the secret wrote,
 * recently, once; without one (REDIS_TRUSTED: the network is the boundary) the same checks run
 * but anyone who can reach Redis passes the signature.
 *
 * A message is one line of header and its body: `tg1 <from> <seq> <at> <sig>\n<body>`.
 * - `from` names the publishing process (unique per start), `seq` counts its messages on one
 *   channel from 1, `at` is its clock (epoch ms) when it sealed the message.
 * - `sig` is HMAC-SHA256 over the purpose (the channel's kind: a change event cannot pass for an
 *   invalidation), `from`, `seq`, `at` and the body, or `-` unsigned.
 * - The body is the user's (JSON); the envelope is read and checked before a byte of it is parsed.
 *
 * A receiver (`Freshness`) refuses a message older than `MESSAGE_WINDOW_MS` or dated before its
 * own subscription began (it cannot have been sent to this subscription: this is what stops a
 * captured message from being delivered again by an instance that just restarted), and a `seq`
 * of a publisher not above the last one it took (a replay within the window).
 *
 * Nothing here throws on bad input: a refusal comes back as a reason, for the caller to count.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';

export const ENVELOPE_VERSION = 'tg1';

/**
 * How old a message may be when it arrives. It must stay longer than the response cache's feed
 * timeout: a message refused as too old then always falls inside a spell without heartbeats, which
 * the cache treats as a gap (it flushes), so refusing it loses no invalidation.
 */
export const MESSAGE_WINDOW_MS = 30_000;

/** Why a message or an entry was refused. */
export type Refusal =
  /** over the byte bound, refused unread */
  | 'too-large'
  /** no envelope could be read */
  | 'malformed'
  /** no signature where one is required */
  | 'unsigned'
  /** a signature that does not match */
  | 'forged'
  /** older than the window, or dated before this receiver subscribed */
  | 'stale'
  /** dated further ahead than the window */
  | 'early'
  /** a sequence number of its publisher not above the last one taken */
  | 'replayed';

/** Printable ASCII without spaces: the header's separator. */
const FROM = /^[!-~]{1,200}$/;
const SIG = /^([0-9a-f]{64}|-)$/;

/** A name for this process, unique per start (host, pid, a random part). */
export function processIdentity(): string {
  const host =
    os
      .hostname()
      .replace(/[^!-~]/g, '-')
      .slice(0, 100) || 'host';
  return `${host}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * HMAC-SHA256 (hex) of `fields` under `purpose`: each field is length-prefixed, so no two lists
 * of fields give the same input.
 */
export function macOf(secret: string, purpose: string, fields: readonly (string | number)[]): string {
  const hmac = createHmac('sha256', secret).update(`${purpose}\n`);
  for (const field of fields) {
    const text = String(field);
    hmac.update(`${Buffer.byteLength(text)}:`).update(text);
  }
  return hmac.digest('hex');
}

/** Whether `sig` is the MAC of `fields` (in constant time). */
export function macMatches(
  secret: string,
  purpose: string,
  fields: readonly (string | number)[],
  sig: string,
): boolean {
  const given = Buffer.from(sig, 'utf8');
  const expected = Buffer.from(macOf(secret, purpose, fields), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Seals the messages one process publishes for one purpose: numbered from 1, signed when a secret is set. */
export class Sealer {
  private seq = 0;

  constructor(
    private readonly purpose: string,
    private readonly secret: string | undefined,
    readonly from: string = processIdentity(),
  ) {
    if (!FROM.test(from)) throw new Error(`a publisher name must be printable ASCII without spaces, got "${from}"`);
  }

  /** The message carrying `body`; call it just before publishing, so the numbers go out in order. */
  seal(body: string, at = Date.now()): string {
    const seq = ++this.seq;
    const sig = this.secret ? macOf(this.secret, this.purpose, [this.from, seq, at, body]) : '-';
    return `${ENVELOPE_VERSION} ${this.from} ${seq} ${at} ${sig}\n${body}`;
  }
}

export type Opened = { ok: true; from: string; seq: number; at: number; body: string } | { ok: false; reason: Refusal };

export interface OpenOptions {
  purpose: string;
  secret: string | undefined;
  maxBytes: number;
}

/**
 * The envelope of `raw`, checked: its size (before anything is read), its header, and with a
 * secret its signature. Freshness is the receiver's (`Freshness.check`).
 */
export function openEnvelope(raw: Buffer | string, { purpose, secret, maxBytes }: OpenOptions): Opened {
  const bytes = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.length;
  if (bytes > maxBytes) return { ok: false, reason: 'too-large' };
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  const newline = text.indexOf('\n');
  if (newline < 0 || newline > 400) return { ok: false, reason: 'malformed' };
  const [version, from, seqText, atText, sig, ...rest] = text.slice(0, newline).split(' ');
  const seq = Number(seqText);
  const at = Number(atText);
  if (
    version !== ENVELOPE_VERSION ||
    rest.length > 0 ||
    from === undefined ||
    !FROM.test(from) ||
    !Number.isSafeInteger(seq) ||
    seq < 1 ||
    !Number.isSafeInteger(at) ||
    sig === undefined ||
    !SIG.test(sig)
  ) {
    return { ok: false, reason: 'malformed' };
  }
  const body = text.slice(newline + 1);
  if (secret) {
    if (sig === '-') return { ok: false, reason: 'unsigned' };
    if (!macMatches(secret, purpose, [from, seq, at, body], sig)) return { ok: false, reason: 'forged' };
  }
  return { ok: true, from, seq, at, body };
}

export interface FreshnessOptions {
  windowMs?: number | undefined;
  /** Publishers remembered at most (a flood of names forgets the oldest, raising the floor past it). */
  maxPublishers?: number | undefined;
  now?: (() => number) | undefined;
}

/**
 * What one receiver (one subscription) takes: messages inside the window, dated after its
 * subscription began, each publisher's numbers rising. Memory: one entry per publisher heard
 * within the window, at most `maxPublishers`.
 */
export class Freshness {
  /** Messages dated before this are refused: the subscription's start, or what was forgotten. */
  private floor = Infinity;
  /** Publisher -> its last seq and date taken; oldest first (re-inserted on update). */
  private readonly last = new Map<string, { seq: number; at: number }>();
  private readonly windowMs: number;
  private readonly maxPublishers: number;
  private readonly now: () => number;

  constructor(options: FreshnessOptions = {}) {
    this.windowMs = options.windowMs ?? MESSAGE_WINDOW_MS;
    this.maxPublishers = options.maxPublishers ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Whether the floor was set since the connection last closed. */
  private armed = false;

  /**
   * The subscription (re)starts now: messages dated before are refused, since they cannot have
   * been sent to it. Call it just before SUBSCRIBE; only the first call after `connectionLost`
   * (or ever) moves the floor, so a SUBSCRIBE sent twice does not refuse what came in between.
   */
  subscribing(at = this.now()): void {
    if (this.armed) return;
    this.armed = true;
    this.floor = Math.max(this.floor === Infinity ? -Infinity : this.floor, at);
  }

  /** The subscriber's connection closed: the next `subscribing` starts a new subscription. */
  connectionLost(): void {
    this.armed = false;
  }

  /** Undefined when the message may be acted on (and it is then remembered), else why not. */
  check(from: string, seq: number, at: number): Refusal | undefined {
    const now = this.now();
    if (at < this.floor || now - at > this.windowMs) return 'stale';
    if (at - now > this.windowMs) return 'early';
    const last = this.last.get(from);
    if (last && seq <= last.seq) return 'replayed';
    this.last.delete(from);
    this.last.set(from, { seq, at });
    this.forget(now);
    return undefined;
  }

  private forget(now: number): void {
    for (const [from, { at }] of this.last) {
      // A publisher silent for the window: whatever of it comes again is refused as stale.
      if (now - at > this.windowMs) this.last.delete(from);
      else if (this.last.size > this.maxPublishers) {
        this.last.delete(from);
        this.floor = Math.max(this.floor, at + 1);
      } else break;
    }
  }
}

/**
 * Counts what was refused or dropped, by reason, and warns at most once per interval with how
 * many since the last warning: a flood of bad messages costs a counter, not a log line each.
 */
export class RefusalCounter {
  readonly byReason = new Map<string, number>();
  private unreported = 0;
  private lastWarnAt = -Infinity;

  constructor(
    /** What was refused, for the log line ("invalidation messages", "shared cache entries"). */
    private readonly what: string,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly intervalMs = 60_000,
  ) {}

  count(reason: string, fields: Record<string, unknown> = {}): void {
    this.byReason.set(reason, (this.byReason.get(reason) ?? 0) + 1);
    this.unreported++;
    const now = performance.now();
    if (now - this.lastWarnAt < this.intervalMs) return;
    this.log.warn(
      { ...fields, reason, refused: this.unreported, refusedTotal: this.total },
      `${this.what} refused or dropped`,
    );
    this.unreported = 0;
    this.lastWarnAt = now;
  }

  get total(): number {
    let total = 0;
    for (const n of this.byReason.values()) total += n;
    return total;
  }
}
