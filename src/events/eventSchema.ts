/**
 * A change event as the body of a message on a shared bus (Redis), and the one place an event
 * from the bus is checked before anything reads it: after its envelope (signedEnvelope.ts: size,
 * signature, freshness), the envelope fields' schema here and the node's schema of the event's
 * declaration (src/table/entities/events.ts), each rebuilding the event key by key (unknown
 * fields are dropped). The topics are derived again from the rebuilt node, never read off the
 * wire. A publisher encodes through the same rebuild, so what it signs is exactly what a
 * receiver checks, for any kind of event the registry declares.
 *
 * The body names the table whose change it carries, and a receiver takes only its own table's:
 * the envelope's signature covers the body, so an event signed by a publisher of another table
 * that shares the signing secret, copied onto this table's channel or history, is refused here.
 * A receiver of a release before the field ignores it (unknown fields are dropped), so publishers
 * can be upgraded first; a body that names no table (such a release's publisher) is refused.
 *
 * decodeEvent() never throws: a bad body comes back as `{ ok: false, reason }` (the reason names
 * the field, never echoes the content), for the bus to count and drop.
 */
import { EventFieldError, read } from '../table/entities/events.js';
import type { ChangeEvent } from './changeEvent.js';
import { eventSourceOf } from './changeEvent.js';

/** Bounds of an event as a whole; each declaration bounds its node's fields. */
export const EVENT_LIMITS = {
  /** A message larger than this is refused unread (and never published). */
  bytes: 128 * 1024,
  /** DynamoDB stream sequence numbers are 21-40 digits. */
  seq: 40,
} as const;

const SEQ = /^\d{1,40}$/;
/** W3C trace context, version-format 00: version-traceid-parentid-flags, lower-case hex. */
export const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export type Decoded = { ok: true; event: ChangeEvent } | { ok: false; reason: string };

/** The event rebuilt from `value` with only the fields of the schema, or EventFieldError thrown. */
function event(value: unknown): ChangeEvent {
  const raw = read.record(value, 'event');
  const source = eventSourceOf(typeof raw.entity === 'string' ? raw.entity : '');
  if (!source) throw new EventFieldError('event.entity is invalid');
  const node = source.spec.readNode(raw.node);
  const rebuilt = {
    entity: source.node,
    type: read.oneOf(raw.type, 'event.type', source.spec.types),
    seq: read.text(raw.seq, 'event.seq', EVENT_LIMITS.seq, SEQ),
    at: read.instant(raw.at, 'event.at'),
    node,
    previous: raw.previous === null ? null : source.spec.readPrevious(raw.previous),
    topics: source.topicsOf(node),
  } as ChangeEvent;
  if (raw.traceparent !== undefined)
    rebuilt.traceparent = read.text(raw.traceparent, 'event.traceparent', 55, TRACEPARENT);
  return rebuilt;
}

/** Bytes an envelope's header may add to an event (signedEnvelope.ts). */
const ENVELOPE_HEADER_BYTES = 400;

/** The fields of an event that travel: the topics do not (a receiver derives them). */
const wireForm = ({ topics: _topics, ...travelling }: ChangeEvent) => travelling;

/**
 * The body of the message for `changeEvent`: the event rebuilt by the schema, as JSON. Throws
 * InvalidEventError when the event does not fit the schema or its bounds: a publisher never
 * sends what every receiver would drop.
 */
export function encodeEvent(changeEvent: ChangeEvent, table: string): string {
  let rebuilt: ChangeEvent;
  try {
    rebuilt = event(changeEvent);
  } catch (error) {
    if (error instanceof EventFieldError) throw new InvalidEventError(error.message);
    throw error;
  }
  const body = JSON.stringify({ table, ...wireForm(rebuilt) });
  const bytes = Buffer.byteLength(body) + ENVELOPE_HEADER_BYTES;
  if (bytes > EVENT_LIMITS.bytes)
    throw new InvalidEventError(`the event is ${bytes} bytes, over ${EVENT_LIMITS.bytes}`);
  return body;
}

/** An event a publisher refuses to send (schema or size). */
export class InvalidEventError extends Error {
  constructor(reason: string) {
    super(`change event not published: ${reason}`);
    this.name = 'InvalidEventError';
  }
}

/**
 * The event in the body of a message whose envelope passed its checks (size, signature,
 * freshness: the bus did those), rebuilt by the schema; refused unless it names `table`.
 */
export function decodeEvent(body: string, table: string): Decoded {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'event is not JSON' };
  }
  const named = (parsed as { table?: unknown } | null)?.table;
  if (named === undefined) return { ok: false, reason: 'event.table is missing' };
  if (named !== table) return { ok: false, reason: "event.table is another table's" };
  try {
    return { ok: true, event: event(parsed) };
  } catch (error) {
    if (error instanceof EventFieldError) return { ok: false, reason: error.message };
    throw error;
  }
}
