import { describe, expect, it } from 'vitest';
import { Freshness, MESSAGE_WINDOW_MS, openEnvelope, RefusalCounter, Sealer } from '../../src/events/signedEnvelope.js';
import { FEED_TIMEOUT_MS } from '../../src/pipeline/responseCache/responseCache.js';

const SECRET = 'a-signing-secret-of-at-least-32-characters';
const open = (raw: string, secret: string | undefined = SECRET, purpose = 'order-event') =>
  openEnvelope(raw, { purpose, secret, maxBytes: 10_000 });

/** A sealed message with its header or body changed, as anyone who can PUBLISH could send it. */
const tamper = (message: string, change: (header: string[], body: string) => [string[], string]) => {
  const nl = message.indexOf('\n');
  const [header, body] = change(message.slice(0, nl).split(' '), message.slice(nl + 1));
  return `${header.join(' ')}\n${body}`;
};

describe('a signed envelope', () => {
  it('carries its body, publisher, number and time', () => {
    const sealer = new Sealer('order-event', SECRET, 'consumer-1');
    const first = sealer.seal('{"a":1}', 1000);
    const second = sealer.seal('{"a":2}', 1001);
    expect(open(first)).toEqual({ ok: true, from: 'consumer-1', seq: 1, at: 1000, body: '{"a":1}' });
    expect(open(second)).toMatchObject({ ok: true, seq: 2, body: '{"a":2}' });
    // Without a secret the same checks run, the signature aside.
    const unsigned = new Sealer('order-event', undefined, 'c').seal('{}', 5);
    expect(openEnvelope(unsigned, { purpose: 'order-event', secret: undefined, maxBytes: 100 })).toMatchObject({
      ok: true,
    });
  });

  it.each<[string, (message: string) => string, string]>([
    ['unsigned', () => new Sealer('order-event', undefined, 'consumer-1').seal('{"a":1}', 1000), 'unsigned'],
    ['signed with another key', () => new Sealer('order-event', `${SECRET}x`, 'c').seal('{}', 1), 'forged'],
    ['signed for another purpose', () => new Sealer('invalidation', SECRET, 'c').seal('{}', 1), 'forged'],
    ['with its body changed', (m) => tamper(m, (h) => [h, '{"a":2}']), 'forged'],
    ['with another publisher', (m) => tamper(m, (h) => [[h[0]!, 'other', ...h.slice(2)], '{"a":1}']), 'forged'],
    ['with its number changed', (m) => tamper(m, (h) => [[...h.slice(0, 2), '9', ...h.slice(3)], '{"a":1}']), 'forged'],
    ['with its time changed', (m) => tamper(m, (h) => [[...h.slice(0, 3), '99999', h[4]!], '{"a":1}']), 'forged'],
    ['without a header', () => '{"a":1}', 'malformed'],
    ['of another version', (m) => tamper(m, (h) => [['tg0', ...h.slice(1)], '{"a":1}']), 'malformed'],
    ['with a header field too many', (m) => tamper(m, (h) => [[...h, 'x'], '{"a":1}']), 'malformed'],
    ['past its byte bound', () => `tg1 c 1 1 -\n${'x'.repeat(10_000)}`, 'too-large'],
  ])('is refused %s', (_, make, reason) => {
    const message = make(new Sealer('order-event', SECRET, 'consumer-1').seal('{"a":1}', 1000));
    expect(open(message)).toEqual({ ok: false, reason });
  });
});

describe('Freshness', () => {
  const at = 1_000_000;
  const aReceiver = (now: { t: number }) => {
    const fresh = new Freshness({ now: () => now.t });
    fresh.subscribing(at);
    return fresh;
  };

  it('takes each publisher’s numbers once, rising, within the window', () => {
    const now = { t: at + 10 };
    const fresh = aReceiver(now);
    expect(fresh.check('a', 1, at + 5)).toBeUndefined();
    expect(fresh.check('a', 2, at + 6)).toBeUndefined();
    expect(fresh.check('b', 1, at + 6)).toBeUndefined();
    expect(fresh.check('a', 2, at + 6)).toBe('replayed');
    expect(fresh.check('a', 1, at + 5)).toBe('replayed');
    expect(fresh.check('a', 7, at + 9)).toBeUndefined();
  });

  it('refuses what is dated before its subscription began, however fresh: a restarted instance does not deliver a capture again', () => {
    const now = { t: at + 10 };
    const fresh = aReceiver(now);
    expect(fresh.check('a', 41, at - 1)).toBe('stale');
    // A repeated SUBSCRIBE (every reconnect sends one) does not move the floor; a new connection does.
    fresh.subscribing(at + 5);
    expect(fresh.check('a', 42, at + 2)).toBeUndefined();
    fresh.connectionLost();
    fresh.subscribing(at + 8);
    expect(fresh.check('a', 43, at + 7)).toBe('stale');
  });

  it('refuses what is older than the window, or dated further ahead than it', () => {
    const now = { t: at + MESSAGE_WINDOW_MS + 10 };
    const fresh = aReceiver(now);
    expect(fresh.check('a', 1, at + 5)).toBe('stale');
    expect(fresh.check('a', 2, now.t + MESSAGE_WINDOW_MS + 1)).toBe('early');
    expect(fresh.check('a', 3, now.t - 5)).toBeUndefined();
  });

  it('stays within its bound of publishers, refusing what it can no longer tell from a replay', () => {
    const now = { t: at + 100 };
    const fresh = new Freshness({ now: () => now.t, maxPublishers: 3 });
    fresh.subscribing(at);
    for (let i = 0; i < 5; i++) expect(fresh.check(`p${i}`, 1, at + 10 + i)).toBeUndefined();
    // p0 and p1 were forgotten: their messages up to the last one taken are refused as stale.
    expect(fresh.check('p1', 1, at + 11)).toBe('stale');
    expect(fresh.check('p4', 1, at + 14)).toBe('replayed');
  });

  it('has a window longer than the feed timeout, so what it refuses for its age falls in a gap the cache already treats as one', () => {
    expect(MESSAGE_WINDOW_MS).toBeGreaterThan(FEED_TIMEOUT_MS);
  });
});

describe('RefusalCounter', () => {
  it('counts every refusal by reason and warns once per interval', () => {
    const warnings: unknown[] = [];
    const counter = new RefusalCounter('things', { warn: (fields: unknown) => void warnings.push(fields) }, 60_000);
    for (let i = 0; i < 50; i++) counter.count(i % 2 ? 'forged' : 'stale');
    expect(counter.total).toBe(50);
    expect(Object.fromEntries(counter.byReason)).toEqual({ forged: 25, stale: 25 });
    expect(warnings).toHaveLength(1);
  });
});
