import { describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope, EVENT_LIMITS, InvalidEventError } from '../../src/events/eventSchema.js';
import type { OrderEventModel } from '../../src/events/orderEvent.js';
import { SeenWindow } from '../../src/events/seenWindow.js';
import { INPUT_LIMITS, MAX_ORDER_LINES } from '../../src/table/limits.js';

const SECRET = 'a-signing-secret-of-at-least-32-characters';
const AT = '2026-06-01T12:00:00.000Z';
const anEvent = (overrides: Partial<OrderEventModel> = {}): OrderEventModel => ({
  type: 'ORDER_PLACED',
  seq: '4000000000000000000001',
  order: {
    kind: 'Order',
    orderId: 'order-1',
    userId: 'alice',
    status: 'PLACED',
    placedAt: AT,
    updatedAt: AT,
    items: [{ productId: 'book-1', productName: 'A book', unitPriceCents: 1999, quantity: 2 }],
    totalCents: 3998,
    version: 1,
  },
  previousStatus: null,
  at: AT,
  ...overrides,
});

/** An encoded message with one part of it replaced (JSON-level), as a Redis client could send. */
const tampered = (change: (message: Record<string, any>) => void, secret?: string) => {
  const message = JSON.parse(encodeEnvelope(anEvent(), 1, secret)) as Record<string, any>;
  change(message);
  return JSON.stringify(message);
};

describe('an order event on the bus', () => {
  it('comes back as it was sent, with its seq, and with a traceparent when it has one', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    for (const event of [anEvent(), anEvent({ traceparent })]) {
      expect(decodeEnvelope(encodeEnvelope(event, 1234))).toEqual({ ok: true, event, publishedAt: 1234 });
    }
  });

  it('leaves out fields the schema does not know, on both sides', () => {
    const message = tampered((m) => {
      m.event.extra = 'x'.repeat(100);
      m.event.order.secret = true;
    });
    const decoded = decodeEnvelope(message);
    expect(decoded).toEqual({ ok: true, event: anEvent(), publishedAt: 1 });
  });

  it.each<[string, (message: Record<string, any>) => void, string]>([
    ['an older version', (m) => (m.v = 1), 'message version is not 2'],
    ['no seq', (m) => delete m.event.seq, 'event.seq is invalid'],
    ['a seq that is not a decimal number', (m) => (m.event.seq = '12ab'), 'event.seq is invalid'],
    ['a seq over 40 digits', (m) => (m.event.seq = '9'.repeat(41)), 'event.seq is invalid'],
    ['an unknown type', (m) => (m.event.type = 'ORDER_DELETED'), 'event.type is invalid'],
    ['an order id that is not an id', (m) => (m.event.order.orderId = 'a#b'), 'order.orderId is invalid'],
    ['a user id of another type', (m) => (m.event.order.userId = 7), 'order.userId is invalid'],
    ['an unknown status', (m) => (m.event.order.status = 'LOST'), 'order.status is invalid'],
    ['no lines', (m) => (m.event.order.items = []), 'order.items is invalid'],
    [
      'too many lines',
      (m) => (m.event.order.items = Array.from({ length: EVENT_LIMITS.lines + 1 }, () => m.event.order.items[0])),
      'order.items is invalid',
    ],
    [
      'a product name past its bound',
      (m) => (m.event.order.items[0].productName = 'x'.repeat(EVENT_LIMITS.productName + 1)),
      'order.items[0].productName is invalid',
    ],
    ['a fractional quantity', (m) => (m.event.order.items[0].quantity = 1.5), 'order.items[0].quantity is invalid'],
    ['an unsafe total', (m) => (m.event.order.totalCents = 2 ** 60), 'order.totalCents is invalid'],
    ['a malformed traceparent', (m) => (m.event.traceparent = '00-xyz'), 'event.traceparent is invalid'],
    ['a date that is not ISO-8601', (m) => (m.event.at = 'yesterday'), 'event.at is invalid'],
  ])('is refused with %s, naming the field', (_, change, reason) => {
    expect(decodeEnvelope(tampered(change))).toEqual({ ok: false, reason });
  });

  it('is refused unread past its byte bound, and when it is not JSON', () => {
    const huge = `{"v":2,"event":"${'x'.repeat(EVENT_LIMITS.bytes)}"}`;
    expect(decodeEnvelope(huge)).toEqual({ ok: false, reason: `message over ${EVENT_LIMITS.bytes} bytes` });
    expect(decodeEnvelope(Buffer.from(huge))).toMatchObject({ ok: false });
    expect(decodeEnvelope('{"v":2,')).toEqual({ ok: false, reason: 'message is not JSON' });
  });

  it('is never published past its bounds', () => {
    const big = anEvent();
    big.order.items = Array.from({ length: EVENT_LIMITS.lines + 1 }, () => big.order.items[0]!);
    expect(() => encodeEnvelope(big, 1)).toThrow(InvalidEventError);
    expect(() => encodeEnvelope(anEvent({ seq: '' }), 1)).toThrow('order event not published: event.seq is invalid');
  });

  it('fits every order a write can store: the bounds sit above the writes’ limits', () => {
    expect(EVENT_LIMITS.lines).toBeGreaterThanOrEqual(MAX_ORDER_LINES);
    expect(EVENT_LIMITS.productName).toBeGreaterThanOrEqual(INPUT_LIMITS.productNameLength);
    const largest = anEvent();
    largest.order.items = Array.from({ length: MAX_ORDER_LINES }, (_, i) => ({
      productId: `p-${'x'.repeat(60)}${i}`.slice(0, 64),
      // Four UTF-8 bytes a character: the largest a name can be in bytes.
      productName: '😀'.repeat(INPUT_LIMITS.productNameLength / 2),
      unitPriceCents: Number.MAX_SAFE_INTEGER,
      quantity: Number.MAX_SAFE_INTEGER,
    }));
    expect(decodeEnvelope(encodeEnvelope(largest, Date.now(), SECRET), SECRET)).toMatchObject({ ok: true });
  });
});

describe('a signed order event', () => {
  it('is accepted with the right secret', () => {
    expect(decodeEnvelope(encodeEnvelope(anEvent(), 1, SECRET), SECRET)).toMatchObject({ ok: true });
  });

  it.each<[string, string]>([
    ['unsigned', encodeEnvelope(anEvent(), 1)],
    ['signed with another secret', encodeEnvelope(anEvent(), 1, `${SECRET}-other`)],
    ['signed, then sent to another user', tampered((m) => (m.event.order.userId = 'mallory'), SECRET)],
    ['signed, then sent again with another time', tampered((m) => (m.publishedAt = 2), SECRET)],
  ])('is refused %s', (_, message) => {
    expect(decodeEnvelope(message, SECRET)).toEqual({ ok: false, reason: 'signature is missing or wrong' });
  });
});

describe('SeenWindow', () => {
  it('says a key is new once, forgets the oldest past its size, and stays within it', () => {
    const seen = new SeenWindow(3);
    expect(['1', '2', '1', '3', '4'].map((key) => seen.firstTime(key))).toEqual([true, true, false, true, true]);
    expect(seen.count).toBe(3);
    // '1' was the oldest when '4' arrived: forgotten, so new again.
    expect(seen.firstTime('1')).toBe(true);
    expect(seen.firstTime('4')).toBe(false);
  });
});
