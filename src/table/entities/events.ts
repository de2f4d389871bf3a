/**
 * Change events: what a change of a declared item means to the subscriptions. A declaration
 * that has events (`defineEvents`) says which changes of its item are events and of what type,
 * the topics an event is published on, and how its node is rebuilt from a message that came
 * from outside the process (every field bounded, only the declared fields kept). The stream
 * processor derives events from these declarations, the buses validate and sign what they
 * rebuild, and the subscriptions listen by topic (src/events/changeEvent.ts holds the one shape
 * every bus carries).
 *
 * A reader never throws anything but EventFieldError for bad input, and its message names the
 * field (`order.items[2].quantity is invalid`), never the content.
 */
import { ID_PATTERN } from '../ids.js';
import type { Entity } from './entity.js';
import type { TopicKind } from './topics.js';

/** A field of an event that does not fit its declaration. */
export class EventFieldError extends Error {
  override name = 'EventFieldError';
}

const fail = (at: string): never => {
  throw new EventFieldError(`${at} is invalid`);
};

/** An ISO-8601 instant in UTC as the writes store it (and DynamoDB's record times). */
const ISO = /^\d{4}-\d{2}-\d{2}T[0-9:.]+Z$/;
/** Longer than any ISO-8601 instant. */
const INSTANT_LENGTH = 40;

/** Readers of untrusted JSON, for the declarations' node schemas: each returns the value or throws EventFieldError naming `at`. */
export const read = {
  record(value: unknown, at: string): Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(at);
    return value as Record<string, unknown>;
  },
  text(value: unknown, at: string, max: number, pattern?: RegExp): string {
    if (typeof value !== 'string' || value.length > max || (pattern && !pattern.test(value))) fail(at);
    return value as string;
  },
  id: (value: unknown, at: string): string => read.text(value, at, 64, ID_PATTERN),
  instant: (value: unknown, at: string): string => read.text(value, at, INSTANT_LENGTH, ISO),
  integer(value: unknown, at: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) fail(at);
    return value as number;
  },
  boolean(value: unknown, at: string): boolean {
    if (typeof value !== 'boolean') fail(at);
    return value as boolean;
  },
  oneOf<T extends string>(value: unknown, at: string, allowed: readonly T[]): T {
    if (!allowed.includes(value as T)) fail(at);
    return value as T;
  },
  /** A list of `min` to `max` elements, each rebuilt by `each`. */
  list<T>(value: unknown, at: string, min: number, max: number, each: (value: unknown, at: string) => T): T[] {
    if (!Array.isArray(value) || value.length < min || value.length > max) fail(at);
    return (value as unknown[]).map((element, i) => each(element, `${at}[${i}]`));
  },
};

/** How a change came: the stream record's event name. */
export type ChangeName = 'INSERT' | 'MODIFY' | 'REMOVE';

/** One change of an item, decoded by its codec: the image before (absent for an INSERT, or a stream without old images) and after. */
export interface Change<M> {
  name: ChangeName;
  before: M | null;
  after: M | null;
}

/** What a change means: an event of `type` about `node`, with what it was before where subscribers are told (`previous`). */
export interface Happened<M, T extends string, P> {
  type: T;
  node: M;
  previous: P | null;
}

export interface EventsSpec<N extends string, M, T extends string, P> {
  /** The kind of node the events are about (its model's `kind`): the events' name on every bus. */
  readonly node: N;
  /** Every type of event, as the schema names them. */
  readonly types: readonly [T, ...T[]];
  /** What one change of the item means, or null: a change nobody subscribes to (a REMOVE, an edit that moved nothing watched). */
  of(change: Change<M>): Happened<M, T, P> | null;
  /**
   * The topics an event is published on (topics.ts), each from a field of its node: every
   * subscription listens to one, and a router may send each event only where its topics are
   * heard. The first is the node's own topic.
   */
  readonly topics: readonly TopicRef<M>[];
  /** The node rebuilt from a message's JSON, only its declared fields, every one bounded. */
  readNode(value: unknown): M;
  /** `previous` rebuilt from a message's JSON (never null here: the caller reads null itself). */
  readPrevious(value: unknown): P;
}

/** A topic of an event: a kind of topic and the field of the node that names it (none for a topic of no parameter). */
export interface TopicRef<M> {
  readonly kind: TopicKind;
  readonly field?: keyof M & string;
}

/** The change events of one kind of item. */
export class ChangeEvents<N extends string = string, M = unknown, T extends string = string, P = unknown> {
  constructor(
    /** The item whose changes are the events (the one copy that speaks for its node: an order's details, not its user's copy). */
    readonly entity: Entity<string, object, object, M>,
    readonly spec: EventsSpec<N, M, T, P>,
  ) {}

  get node(): N {
    return this.spec.node;
  }

  /** The topics of an event about `node`. */
  topicsOf(node: M): string[] {
    return this.spec.topics.map(({ kind, field }) =>
      kind.of(field === undefined ? undefined : String(node[field] as string | number)),
    );
  }
}

/** Declares the change events of `entity`. */
export const defineEvents = <const N extends string, M, const T extends string, P>(
  entity: Entity<string, object, object, M>,
  spec: EventsSpec<N, M, T, P>,
): ChangeEvents<N, M, T, P> => new ChangeEvents(entity, spec);
