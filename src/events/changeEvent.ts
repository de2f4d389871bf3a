/**
 * A change event: one shape for the change of any item whose declaration has events
 * (src/table/entities/events.ts), on every bus (in process, Redis) and in the SSE replay. The
 * stream processor makes it from a stream record, the buses carry it (eventSchema.ts is its
 * wire form), the subscriptions deliver it by topic.
 */
import type { ChangeEvents, ChangeName } from '../table/entities/events.js';
import { EVENT_SOURCES } from '../table/entities/registry.js';

type EventOf<S> =
  S extends ChangeEvents<infer N, infer M, infer T, infer P>
    ? {
        /** The kind of node that changed (its declaration's events). */
        entity: N;
        type: T;
        /**
         * The stream record's SequenceNumber (a decimal string): one change, however often it is
         * published (a replay, a hand-over, the Lambda and a consumer). Each instance delivers a
         * `seq` once (src/graphql/eventFanOut.ts); SSE uses it as the event id.
         */
        seq: string;
        /** ISO-8601, when DynamoDB recorded the change (ApproximateCreationDateTime: whole seconds on AWS). */
        at: string;
        /** The node after the change (before it, for a removal). */
        node: M;
        /** What it was before, where the declaration tells subscribers (an order's status); null for a new one. */
        previous: P | null;
        /** Where it is published (src/table/entities/topics.ts), from the node by its declaration: never read off the wire. */
        topics: readonly string[];
        /**
         * W3C trace context of the record's processing (a span in the trace of the write that
         * caused the change), when traced: each subscriber's execution joins that trace.
         */
        traceparent?: string;
      }
    : never;

/** Any change event: a union over the declarations, so a switch on `entity` can be exhaustive. */
export type ChangeEvent = EventOf<(typeof EVENT_SOURCES)[number]>;
export type EventEntity = ChangeEvent['entity'];
export type ChangeEventOf<N extends EventEntity> = Extract<ChangeEvent, { entity: N }>;

type AnySource = ChangeEvents<EventEntity, unknown, string, unknown>;

/** The declaration of each event entity. */
const SOURCES: ReadonlyMap<string, AnySource> = new Map(
  (EVENT_SOURCES as readonly AnySource[]).map((source) => [source.node, source]),
);

/** The events declaration of `entity`, undefined for a name no declaration has (a message from elsewhere). */
export const eventSourceOf = (entity: string): AnySource | undefined => SOURCES.get(entity);

/** The event declarations by the item whose changes they are (the stream processor's look-up). */
const BY_ENTITY: ReadonlyMap<unknown, AnySource> = new Map(
  (EVENT_SOURCES as readonly AnySource[]).map((source) => [source.entity, source]),
);
export const eventsOfEntity = (entity: unknown): AnySource | undefined => BY_ENTITY.get(entity);

/**
 * The event a change of an item of `source`'s kind means, or null. `before`/`after` are the
 * images decoded by the kind's codec.
 */
export function changeEventOf(
  source: AnySource,
  change: { name: ChangeName; before: unknown; after: unknown },
  record: { seq: string; at: string },
): ChangeEvent | null {
  const happened = source.spec.of(change);
  if (!happened) return null;
  return {
    entity: source.node,
    type: happened.type,
    seq: record.seq,
    at: record.at,
    node: happened.node,
    previous: happened.previous,
    topics: source.topicsOf(happened.node),
  } as ChangeEvent;
}

/** A short description of an event for a log line: what and which node, never its content. */
export const describeEvent = (
  event: ChangeEvent,
): { entity: string; type: string; seq: string; topic: string | undefined } => ({
  entity: event.entity,
  type: event.type,
  seq: event.seq,
  topic: event.topics[0],
});
