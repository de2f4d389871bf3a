/**
 * The order event as the body of a message on a shared bus (Redis), and the one place an event
 * from the bus is checked before anything reads it: after its envelope (signedEnvelope.ts: size,
 * signature, freshness), a schema with bounded strings, numbers and lines, rebuilt key by key
 * (unknown fields are dropped). A publisher encodes through the same rebuild, so what it signs
 * is exactly what a receiver checks.
 *
 * decodeEvent() never throws: a bad body comes back as `{ ok: false, reason }` (the reason names
 * the field, never echoes the content), for the bus to count and drop.
 */
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

export type Decoded = { ok: true; event: OrderEventModel } | { ok: false; reason: string };

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

/** Bytes an envelope's header may add to an event (signedEnvelope.ts). */
const ENVELOPE_HEADER_BYTES = 400;

/**
 * The body of the message for `orderEvent`: the event rebuilt by the schema, as JSON. Throws
 * InvalidEventError when the event does not fit the schema or its bounds: a publisher never
 * sends what every receiver would drop.
 */
export function encodeEvent(orderEvent: OrderEventModel): string {
  let rebuilt: OrderEventModel;
  try {
    rebuilt = event(orderEvent);
  } catch (error) {
    if (error instanceof Invalid) throw new InvalidEventError(error.message);
    throw error;
  }
  const body = JSON.stringify(rebuilt);
  const bytes = Buffer.byteLength(body) + ENVELOPE_HEADER_BYTES;
  if (bytes > EVENT_LIMITS.bytes)
    throw new InvalidEventError(`the event is ${bytes} bytes, over ${EVENT_LIMITS.bytes}`);
  return body;
}

/** An event a publisher refuses to send (schema or size). */
export class InvalidEventError extends Error {
  constructor(reason: string) {
    super(`order event not published: ${reason}`);
    this.name = 'InvalidEventError';
  }
}

/**
 * The event in the body of a message whose envelope passed its checks (size, signature,
 * freshness: the bus did those), rebuilt by the schema.
 */
export function decodeEvent(body: string): Decoded {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'event is not JSON' };
  }
  try {
    return { ok: true, event: event(parsed) };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, reason: error.message };
    throw error;
  }
}
