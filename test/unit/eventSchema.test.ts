import { describe, expect, it } from 'vitest';
import type { ChangeEventOf } from '../../src/events/changeEvent.js';
import { decodeEvent, encodeEvent, EVENT_LIMITS, InvalidEventError } from '../../src/events/eventSchema.js';
import { SeenWindow } from '../../src/events/seenWindow.js';
import { ORDER_EVENT_LIMITS } from '../../src/table/entities/order.js';
import { INPUT_LIMITS, MAX_ORDER_LINES } from '../../src/table/limits.js';
import { anOrderEvent } from '../support/factories.js';

const AT = '2026-06-01T12:00:00.000Z';
/** The table whose bus carries the events here. */
const TABLE = 'shop';
const anEvent = (overrides: Partial<ChangeEventOf<'Order'>> = {}): ChangeEventOf<'Order'> => ({
  ...anOrderEvent(
    {
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
    '4000000000000000000001',
  ),
  ...overrides,
});

/** An encoded event with one part of it replaced (JSON-level), as a publisher with the key could send. */
const tampered = (change: (event: Record<string, any>) => void) => {
  const event = JSON.parse(encodeEvent(anEvent(), TABLE)) as Record<string, any>;
  change(event);
  return JSON.stringify(event);
};

describe('a change event on the bus', () => {
  it('comes back as it was sent, with its seq, and with a traceparent when it has one', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const shipped = anEvent({ type: 'ORDER_STATUS_CHANGED', previous: { status: 'PLACED' } });
    for (const event of [anEvent(), anEvent({ traceparent }), shipped]) {
      expect(decodeEvent(encodeEvent(event, TABLE), TABLE)).toEqual({ ok: true, event });
    }
  });

  it('carries no topics: the receiver derives them from the node by its declaration', () => {
    const body = JSON.parse(encodeEvent(anEvent(), TABLE)) as Record<string, unknown>;
    expect(body).not.toHaveProperty('topics');
    const forged = JSON.stringify({ ...body, topics: ['user-orders:mallory'] });
    expect(decodeEvent(forged, TABLE)).toMatchObject({
      ok: true,
      event: { topics: ['order:order-1', 'user-orders:alice', 'orders'] },
    });
  });

  it('leaves out fields the schema does not know, on both sides', () => {
    const message = tampered((m) => {
      m.extra = 'x'.repeat(100);
      m.node.secret = true;
    });
    expect(decodeEvent(message, TABLE)).toEqual({ ok: true, event: anEvent() });
  });

  it.each<[string, (message: Record<string, any>) => void, string]>([
    ['no seq', (m) => delete m.seq, 'event.seq is invalid'],
    ['a seq that is not a decimal number', (m) => (m.seq = '12ab'), 'event.seq is invalid'],
    ['a seq over 40 digits', (m) => (m.seq = '9'.repeat(41)), 'event.seq is invalid'],
    ['an entity no declaration has', (m) => (m.entity = 'Invoice'), 'event.entity is invalid'],
    ['no entity', (m) => delete m.entity, 'event.entity is invalid'],
    ['an unknown type', (m) => (m.type = 'ORDER_DELETED'), 'event.type is invalid'],
    ['a type of another entity', (m) => (m.type = 'REVIEW_ADDED'), 'event.type is invalid'],
    ['an order id that is not an id', (m) => (m.node.orderId = 'a#b'), 'order.orderId is invalid'],
    ['a user id of another type', (m) => (m.node.userId = 7), 'order.userId is invalid'],
    ['an unknown status', (m) => (m.node.status = 'LOST'), 'order.status is invalid'],
    ['an unknown previous status', (m) => (m.previous = { status: 'LOST' }), 'previous.status is invalid'],
    ['no lines', (m) => (m.node.items = []), 'order.items is invalid'],
    [
      'too many lines',
      (m) => (m.node.items = Array.from({ length: ORDER_EVENT_LIMITS.lines + 1 }, () => m.node.items[0])),
      'order.items is invalid',
    ],
    [
      'a product name past its bound',
      (m) => (m.node.items[0].productName = 'x'.repeat(ORDER_EVENT_LIMITS.productName + 1)),
      'order.items[0].productName is invalid',
    ],
    ['a fractional quantity', (m) => (m.node.items[0].quantity = 1.5), 'order.items[0].quantity is invalid'],
    ['an unsafe total', (m) => (m.node.totalCents = 2 ** 60), 'order.totalCents is invalid'],
    ['a malformed traceparent', (m) => (m.traceparent = '00-xyz'), 'event.traceparent is invalid'],
    ['a date that is not ISO-8601', (m) => (m.at = 'yesterday'), 'event.at is invalid'],
  ])('is refused with %s, naming the field', (_, change, reason) => {
    expect(decodeEvent(tampered(change), TABLE)).toEqual({ ok: false, reason });
  });

  it('names its table, and is refused by a receiver of another table or without the name', () => {
    expect(JSON.parse(encodeEvent(anEvent(), TABLE))).toMatchObject({ table: TABLE });
    expect(decodeEvent(encodeEvent(anEvent(), 'another-shop'), TABLE)).toEqual({
      ok: false,
      reason: "event.table is another table's",
    });
    expect(
      decodeEvent(
        tampered((m) => delete m.table),
        TABLE,
      ),
    ).toEqual({ ok: false, reason: 'event.table is missing' });
    expect(
      decodeEvent(
        tampered((m) => (m.table = { toString: TABLE })),
        TABLE,
      ),
    ).toMatchObject({ ok: false });
    for (const notAnObject of ['null', '7', '"shop"', '[]'])
      expect(decodeEvent(notAnObject, TABLE)).toEqual({ ok: false, reason: 'event.table is missing' });
  });

  it('is refused when it is not JSON', () => {
    expect(decodeEvent('{"type":', TABLE)).toEqual({ ok: false, reason: 'event is not JSON' });
  });

  it('is never published past its bounds', () => {
    const big = anEvent();
    big.node.items = Array.from({ length: ORDER_EVENT_LIMITS.lines + 1 }, () => big.node.items[0]!);
    expect(() => encodeEvent(big, TABLE)).toThrow(InvalidEventError);
    expect(() => encodeEvent(anEvent({ seq: '' }), TABLE)).toThrow('change event not published: event.seq is invalid');
  });

  it('fits every order a write can store: the bounds sit above the writes’ limits', () => {
    expect(ORDER_EVENT_LIMITS.lines).toBeGreaterThanOrEqual(MAX_ORDER_LINES);
    expect(ORDER_EVENT_LIMITS.productName).toBeGreaterThanOrEqual(INPUT_LIMITS.productNameLength);
    const largest = anEvent();
    largest.node.items = Array.from({ length: MAX_ORDER_LINES }, (_, i) => ({
      productId: `p-${'x'.repeat(60)}${i}`.slice(0, 64),
      // Four UTF-8 bytes a character: the largest a name can be in bytes.
      productName: '😀'.repeat(INPUT_LIMITS.productNameLength / 2),
      unitPriceCents: Number.MAX_SAFE_INTEGER,
      quantity: Number.MAX_SAFE_INTEGER,
    }));
    expect(decodeEvent(encodeEvent(largest, TABLE), TABLE)).toMatchObject({ ok: true });
    expect(Buffer.byteLength(encodeEvent(largest, TABLE))).toBeLessThan(EVENT_LIMITS.bytes);
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
