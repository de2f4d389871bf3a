/**
 * The wire format of order events on a shared bus (Redis), and the one place an event from the
 * bus is checked before anything reads it: JSON of bounded size, then a schema with bounded
 * strings, numbers and lines, rebuilt key by key (unknown fields are dropped), then, when a
 * signing secret is set, an HMAC-SHA256 over the rebuilt event. A publisher encodes through the
 * same rebuild, so what it signs is exactly what a receiver checks.
 *
 * `{"v":2,"publishedAt":<ms>,"event":{...},"sig":"<hex>"}`: `sig` only with a secret.
 *
 * decodeEnvelope() never throws: a bad message comes back as `{ ok: false, reason }` (the reason
 * names the field, never echoes the content), for the bus to count and drop.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ID_PATTERN } from '../table/keys.js';
import { ORDER_STATUSES } from '../table/models.js';
import type { OrderLineModel, OrderModel, OrderStatus } from '../table/models.js';
import type { OrderEventModel } from './orderEvent.js';

/**
 * Bounds of an event. The order bounds sit above what a write can store (asserted by a unit test
 * against the writes' limits), so every real order fits and nothing far larger gets parsed.
 */
export const EVENT_LIMITS = {
  /** A message larger than this is refused unread (and never published). */
  bytes: 128 * 1024,
  lines: 100,
  productName: 200,
  timestamp: 40,
  /** DynamoDB stream sequence numbers are 21-40 digits. */
  seq: 40,
} as const;

const STATUSES: readonly OrderStatus[] = ORDER_STATUSES;
const TYPES: readonly OrderEventModel['type'][] = ['ORDER_PLACED', 'ORDER_STATUS_CHANGED'];
const SEQ = /^\d{1,40}$/;
/** W3C trace context, version-format 00: version-traceid-parentid-flags, lower-case hex. */
export const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T[0-9:.]+Z$/;

export type Decoded = { ok: true; event: OrderEventModel; publishedAt: number } | { ok: false; reason: string };

class Invalid extends Error {}

const fail = (reason: string): never => {
  throw new Invalid(reason);
};

function record(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`${at} is not an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, at: string, max: number, pattern?: RegExp): string {
  if (typeof value !== 'string' || value.length > max || (pattern && !pattern.test(value))) fail(`${at} is invalid`);
  return value as string;
}

function integer(value: unknown, at: string, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) fail(`${at} is invalid`);
  return value as number;
}

function oneOf<T extends string>(value: unknown, at: string, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) fail(`${at} is invalid`);
  return value as T;
}

function line(value: unknown, at: string): OrderLineModel {
  const raw = record(value, at);
  return {
    productId: text(raw.productId, `${at}.productId`, 64, ID_PATTERN),
    productName: text(raw.productName, `${at}.productName`, EVENT_LIMITS.productName),
    unitPriceCents: integer(raw.unitPriceCents, `${at}.unitPriceCents`),
    quantity: integer(raw.quantity, `${at}.quantity`, 1),
  };
}

function order(value: unknown): OrderModel {
  const raw = record(value, 'order');
  if (raw.kind !== 'Order') fail('order.kind is invalid');
  if (!Array.isArray(raw.items) || raw.items.length === 0 || raw.items.length > EVENT_LIMITS.lines) {
    fail('order.items is invalid');
  }
  return {
    kind: 'Order',
    orderId: text(raw.orderId, 'order.orderId', 64, ID_PATTERN),
    userId: text(raw.userId, 'order.userId', 64, ID_PATTERN),
    status: oneOf(raw.status, 'order.status', STATUSES),
    placedAt: text(raw.placedAt, 'order.placedAt', EVENT_LIMITS.timestamp, ISO),
    updatedAt: text(raw.updatedAt, 'order.updatedAt', EVENT_LIMITS.timestamp, ISO),
    items: (raw.items as unknown[]).map((item, i) => line(item, `order.items[${i}]`)),
    totalCents: integer(raw.totalCents, 'order.totalCents'),
    version: integer(raw.version, 'order.version'),
  };
}

/** The event rebuilt from `value` with only the fields of the schema, or Invalid thrown. */
function event(value: unknown): OrderEventModel {
  const raw = record(value, 'event');
  const rebuilt: OrderEventModel = {
    type: oneOf(raw.type, 'event.type', TYPES),
    seq: text(raw.seq, 'event.seq', EVENT_LIMITS.seq, SEQ),
    order: order(raw.order),
    previousStatus: raw.previousStatus === null ? null : oneOf(raw.previousStatus, 'event.previousStatus', STATUSES),
    at: text(raw.at, 'event.at', EVENT_LIMITS.timestamp, ISO),
  };
  if (raw.traceparent !== undefined) rebuilt.traceparent = text(raw.traceparent, 'event.traceparent', 55, TRACEPARENT);
  return rebuilt;
}

const signature = (secret: string, publishedAt: number, body: string): string =>
  createHmac('sha256', secret).update(`v2.${publishedAt}.${body}`).digest('hex');

/**
 * The message for `orderEvent`, signed with `secret` when given. Throws when the event does not
 * fit the schema or its bounds (EventTooLargeError for size): a publisher never sends what
 * every receiver would drop.
 */
export function encodeEnvelope(orderEvent: OrderEventModel, publishedAt: number, secret?: string): string {
  let rebuilt: OrderEventModel;
  try {
    rebuilt = event(orderEvent);
  } catch (error) {
    if (error instanceof Invalid) throw new InvalidEventError(error.message);
    throw error;
  }
  const body = JSON.stringify(rebuilt);
  const sig = secret ? `,"sig":"${signature(secret, publishedAt, body)}"` : '';
  const message = `{"v":2,"publishedAt":${publishedAt},"event":${body}${sig}}`;
  const bytes = Buffer.byteLength(message);
  if (bytes > EVENT_LIMITS.bytes)
    throw new InvalidEventError(`the event is ${bytes} bytes, over ${EVENT_LIMITS.bytes}`);
  return message;
}

/** An event a publisher refuses to send (schema or size). */
export class InvalidEventError extends Error {
  constructor(reason: string) {
    super(`order event not published: ${reason}`);
    this.name = 'InvalidEventError';
  }
}

/**
 * A message from the bus, checked: size first (before JSON.parse), then the schema, then the
 * signature when `secret` is set (a message without one, or with a wrong one, is refused).
 */
export function decodeEnvelope(message: string | Buffer, secret?: string): Decoded {
  // Counting bytes of a huge string is cheap next to parsing it; a Buffer knows its length.
  const bytes = typeof message === 'string' ? Buffer.byteLength(message) : message.length;
  if (bytes > EVENT_LIMITS.bytes) return { ok: false, reason: `message over ${EVENT_LIMITS.bytes} bytes` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.toString());
  } catch {
    return { ok: false, reason: 'message is not JSON' };
  }
  try {
    const raw = record(parsed, 'message');
    if (raw.v !== 2) fail('message version is not 2');
    const publishedAt = integer(raw.publishedAt, 'publishedAt');
    const rebuilt = event(raw.event);
    if (secret) {
      const given = typeof raw.sig === 'string' ? Buffer.from(raw.sig, 'utf8') : Buffer.alloc(0);
      const expected = Buffer.from(signature(secret, publishedAt, JSON.stringify(rebuilt)), 'utf8');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) fail('signature is missing or wrong');
    }
    return { ok: true, event: rebuilt, publishedAt };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, reason: error.message };
    throw error;
  }
}
