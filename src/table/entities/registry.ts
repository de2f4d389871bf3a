/**
 * The registry: every kind of item the table holds, declared once (entities/*.ts), and the
 * look-ups the mechanisms share. A key is matched to its kind through the templates that build
 * it, never through prefixes written again here.
 */
import type { NodeModel } from '../models.js';
import type { Item } from './attributes.js';
import type { Entity, Range } from './entity.js';
import {
  APP_MANIFEST,
  DOCUMENT_REGISTRY_HEAD,
  FEED_PROBE,
  MANIFEST_INDEX_PART,
  MIGRATION,
  SEED_MARKER,
  STREAM_CHECKPOINT,
  STREAM_LEASE,
  STREAM_WORKER,
  TRUSTED_DOCUMENT,
} from './meta.js';
import { ORDER, ORDER_EVENTS, USER_ORDER } from './order.js';
import { CATEGORY, PRODUCT, SALE_MARKER } from './product.js';
import { RANGES } from './ranges.js';
import { BUYER, PRODUCT_RATING, PRODUCT_REVIEW, REVIEW, REVIEW_EVENTS } from './review.js';
import type { ItemKey } from './template.js';
import { EMAIL_GUARD, USER } from './user.js';

/** Every kind of item the table holds. A kind missing here is an item no mechanism knows. */
export const ENTITIES = [
  USER,
  EMAIL_GUARD,
  ORDER,
  USER_ORDER,
  PRODUCT,
  SALE_MARKER,
  CATEGORY,
  REVIEW,
  PRODUCT_REVIEW,
  PRODUCT_RATING,
  BUYER,
  STREAM_CHECKPOINT,
  STREAM_LEASE,
  STREAM_WORKER,
  FEED_PROBE,
  SEED_MARKER,
  MIGRATION,
  DOCUMENT_REGISTRY_HEAD,
  APP_MANIFEST,
  TRUSTED_DOCUMENT,
  MANIFEST_INDEX_PART,
] as const;

export type AnyEntity = Entity<string, object, object, unknown>;

/**
 * Every kind of item whose changes are events (events.ts), by the node they are about. A kind
 * missing here publishes nothing, and the buses refuse its events as of no declared kind.
 */
export const EVENT_SOURCES = [ORDER_EVENTS, REVIEW_EVENTS] as const;

/** The first `#`-separated segment of a key (`USER#`, `META#`): what a kind's partition key starts with. */
const segmentOf = (text: string): string => {
  const hash = text.indexOf('#');
  return hash < 0 ? text : text.slice(0, hash + 1);
};

/** The kinds whose partition keys start with each segment: a key is parsed by these only. */
function bySegment(entities: readonly AnyEntity[]): Map<string, AnyEntity[]> {
  const map = new Map<string, AnyEntity[]>();
  for (const entity of entities) {
    const segment = segmentOf(entity.spec.key.PK.prefix);
    const list = map.get(segment);
    if (list) list.push(entity);
    else map.set(segment, [entity]);
  }
  return map;
}

/** What a key is, as far as the templates can tell. */
export type KeyMatch =
  /** A key of one kind, with the texts its parameters hold. */
  | { kind: 'item'; entity: AnyEntity; params: Readonly<Record<string, string>> }
  /**
   * A key in the partition of known kinds whose sort key is of none of their shapes (an item
   * an import or a console wrote): the partition's parameters, and the kinds that live there.
   */
  | { kind: 'partition'; entities: readonly AnyEntity[]; params: Readonly<Record<string, string>> };

/** Matches keys against a list of kinds (the registry's, or a test's). */
export function keyMatcher(entities: readonly AnyEntity[]) {
  const segments = bySegment(entities);
  return (key: ItemKey): KeyMatch | undefined => {
    const candidates = segments.get(segmentOf(key.PK));
    if (!candidates) return undefined;
    const partition: AnyEntity[] = [];
    // One object per key: a template writes into it only what it parsed.
    const params: Record<string, string> = {};
    for (const entity of candidates) {
      if (!entity.spec.key.PK.parseInto(key.PK, params)) continue;
      if (entity.spec.key.SK.parseInto(key.SK, params)) return { kind: 'item', entity, params };
      partition.push(entity);
    }
    if (partition.length > 0) return { kind: 'partition', entities: partition, params };
    // A partition key that starts like a kind's but does not parse (`PRODUCT#` with no id):
    // its kinds, none of whose parameters is known.
    const started = candidates.filter((entity) => key.PK.startsWith(entity.spec.key.PK.prefix));
    return started.length > 0 ? { kind: 'partition', entities: started, params: {} } : undefined;
  };
}

/** The kind of `key` in the registry, or the partition it lies in. */
export const matchKey = keyMatcher(ENTITIES);

/**
 * The ranges an item of `key` lies in or may be listed in: those its key shows (a range of the
 * table's own key), and the index ranges its kind declares (`listedIn`).
 */
export function rangesOfKey(key: ItemKey): readonly Range<object>[] {
  const shown = RANGES.filter((range) => range.contains({ PK: key.PK, SK: key.SK }));
  const match = matchKey(key);
  return match?.kind === 'item' && match.entity.spec.listedIn ? [...shown, ...match.entity.spec.listedIn] : shown;
}

/** What the codec of any kind decodes its items to: a node, a category counter, a product's rating. */
export type ItemModel = (typeof ENTITIES)[number] extends infer E
  ? E extends Entity<string, object, object, infer M>
    ? M
    : never
  : never;

/** `entityType` -> the codec of every kind that has one. */
const DECODERS: ReadonlyMap<string, (item: Item) => ItemModel> = new Map(
  (ENTITIES as readonly AnyEntity[])
    .filter((entity) => entity.spec.codec !== undefined)
    .map((entity) => [entity.type, (item: Item) => entity.codec.fromItem(item) as ItemModel]),
);

/** Decodes any item a point read can return by its kind's codec; null for kinds without one (bookkeeping). */
export function itemToModel(item: Item): ItemModel | null {
  const decode = typeof item.entityType === 'string' ? DECODERS.get(item.entityType) : undefined;
  return decode ? decode(item) : null;
}

/** `entityType` -> the kinds that decode to a node of the API. */
const NODE_DECODERS: ReadonlyMap<string, (item: Item) => NodeModel> = new Map(
  (ENTITIES as readonly AnyEntity[])
    .filter((entity) => entity.spec.node !== undefined)
    .map((entity) => [entity.type, (item: Item) => entity.codec.fromItem(item) as NodeModel]),
);

/** Decodes any item a point read can return; null for kinds that are not nodes of the API. */
export function itemToNode(item: Item): NodeModel | null {
  const decode = typeof item.entityType === 'string' ? NODE_DECODERS.get(item.entityType) : undefined;
  return decode ? decode(item) : null;
}
