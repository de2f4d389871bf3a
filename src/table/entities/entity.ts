/**
 * The shape of a declaration: one per kind of item the table holds (entities/*.ts) and one per
 * range a Query reads (ranges.ts). A declaration says everything the mechanisms need to know
 * about its kind: its key and index templates, its codec, who may see it, and the dependency
 * tags a key or an image of it maps to. The registry (registry.ts) lists them; the mechanisms
 * (dependency tags, global ids, loaders, access, the generated docs) iterate over it.
 */
import type { NodeModel } from '../models.js';
import type { Item } from './attributes.js';
import type { ItemKey, KeyTemplate, Parsed } from './template.js';
import { evaluateTags } from './tags.js';
import type { TagRef } from './tags.js';

/**
 * Who may read an item of the kind through the API: everyone (the catalog), its owner and the
 * admins, or the admins alone (bookkeeping the API never serves reads as admin data).
 */
export type Visibility = 'public' | 'owner' | 'admin';

/** The attributes of the table's indexes that hold keys (src/table/definition.ts). */
export type IndexAttribute = 'GSI1PK' | 'GSI1SK' | 'LSI1SK' | 'GSI2PK' | 'GSI2SK' | 'GSI3SK' | 'GSI4PK';
/** An index of the table, or the table itself. */
export type IndexName = 'table' | 'GSI1' | 'GSI2' | 'GSI3' | 'GSI4' | 'GSI5' | 'LSI1';
/** An attribute a range is keyed by. */
export type RangeAttribute = 'PK' | 'SK' | IndexAttribute;

/** Item <-> model: what the document client reads and writes, and what resolvers see. */
export interface Codec<M> {
  toItem(this: void, model: M): Item;
  fromItem(this: void, item: Item): M;
}

/**
 * What a Query of one range depends on: the range's tags and, when its items lie in it by an
 * index key, the own tags of each item it returns (a write that knows only an item's key names
 * those, not the range: a product's key does not show its category).
 */
export interface RangeRead {
  readonly tags: readonly string[];
  readonly byIndex: boolean;
}

/**
 * A range a Query reads: one partition of the table or of an index (the partition key's
 * template), optionally only the items whose sort key has a prefix. Reading it records `tags`;
 * an item whose image lies in it (its partition attribute parses) changes those tags.
 */
export class Range<V extends object = Record<string, unknown>> {
  constructor(
    readonly spec: {
      /** What it is (docs). */
      readonly name: string;
      /** The access patterns of docs/design.md that read it (docs). */
      readonly patterns: string;
      readonly indexes: readonly IndexName[];
      readonly partition: { readonly attribute: RangeAttribute; readonly template: KeyTemplate<V> };
      /** The sort keys its indexes order it by (docs). */
      readonly sorts: readonly { readonly attribute: RangeAttribute; readonly template: KeyTemplate<object> }[];
      /** Only the items whose `attribute` starts with `prefix` (a partition that holds other kinds too). */
      readonly within?: { readonly attribute: RangeAttribute; readonly prefix: string };
      readonly tags: readonly TagRef[];
    },
  ) {}

  /** The tags a read of the range of `values` depends on. */
  tagsOf(values: Parsed<V> | V): string[] {
    return evaluateTags(this.spec.tags, values as Record<string, string>);
  }

  /** What a Query of the range of `values` depends on (the page query carries it to the dependency record). */
  read(values: Parsed<V> | V): RangeRead {
    return { tags: this.tagsOf(values), byIndex: this.spec.partition.attribute !== 'PK' };
  }

  /** The parameters of the partition `image` lies in, when it lies in the range. */
  private paramsOf(image: Readonly<Record<string, string | undefined>>): Parsed<V> | undefined {
    const { partition, within } = this.spec;
    const params = partition.template.parse(image[partition.attribute]);
    if (!params || (within && !image[within.attribute]?.startsWith(within.prefix))) return undefined;
    return params;
  }

  /** Whether an item of `image` (or of a key alone) lies in the range. */
  contains(image: Readonly<Record<string, string | undefined>>): boolean {
    return this.paramsOf(image) !== undefined;
  }

  /** The range's tags if `image` lies in it, else none. */
  tagsOfImage(image: Readonly<Record<string, string | undefined>>): string[] {
    const params = this.paramsOf(image);
    return params ? evaluateTags(this.spec.tags, params) : [];
  }
}

/** One kind of item: the declaration every mechanism reads. */
export interface EntitySpec<T extends string, PK extends object, SK extends object, M> {
  /** Its `entityType` attribute (kinds of bookkeeping may share one). */
  readonly type: T;
  /** What the item is (docs: "user profile"). */
  readonly item: string;
  /** What it holds (docs). */
  readonly holds: string;
  readonly key: { readonly PK: KeyTemplate<PK>; readonly SK: KeyTemplate<SK> };
  /** The index keys it carries (docs, and the ranges of ranges.ts it may lie in). */
  readonly indexes?: Readonly<Partial<Record<IndexAttribute, KeyTemplate<object>>>>;
  readonly visibility: Visibility;
  /**
   * The tags of the item itself, from its key's parameters: what a point read of it depends
   * on, and what any change of it changes (besides the ranges its image lies in). None: no
   * answer reads the item, and a point read of it makes an answer uncacheable.
   */
  readonly tags: readonly TagRef[];
  /**
   * The tags a write of the key may change that neither the key nor a range of the table's own
   * key shows (an index range the item's attributes place it in): what the writing instance
   * evicts before it answers, from the touched keys alone.
   */
  writeTags?(params: Parsed<PK & SK>): string[];
  /** Pages that may list an item of the kind, besides the table ranges its key shows (the loaders forget them after a write). */
  readonly listedIn?: readonly Range<object>[];
  readonly codec?: Codec<M>;
  /** The node of the API its codec decodes it to (entities/nodes.ts says how that node is identified). */
  readonly node?: NodeModel['kind'];
}

export class Entity<T extends string = string, PK extends object = object, SK extends object = object, M = unknown> {
  readonly type: T;

  constructor(readonly spec: EntitySpec<T, PK, SK, M>) {
    this.type = spec.type;
  }

  /** The item's key, each part checked (InvalidKeyError for a bad id). */
  keyOf(values: PK & SK): ItemKey {
    return { PK: this.spec.key.PK.build(values), SK: this.spec.key.SK.build(values) };
  }

  /** The parameters `key` holds, when it is a key of this kind. */
  parseKey(key: ItemKey): Parsed<PK & SK> | undefined {
    const pk = this.spec.key.PK.parse(key.PK);
    if (!pk) return undefined;
    const sk = this.spec.key.SK.parse(key.SK);
    return sk ? { ...pk, ...sk } : undefined;
  }

  /** The item's own tags, from its key's parameters. */
  tagsOf(params: Readonly<Record<string, string | undefined>>): string[] {
    return evaluateTags(this.spec.tags, params);
  }

  /** The codec, for a kind that has one (a bug to ask for another's). */
  get codec(): Codec<M> {
    if (!this.spec.codec) throw new Error(`${this.spec.item} has no codec`);
    return this.spec.codec;
  }
}

/**
 * The end of a switch over a closed union (`default: return unreachable(value)`): a case the
 * switch left out makes `value` something other than `never`, and the typecheck fails there.
 */
export const unreachable = (value: never): never => {
  throw new Error(`unexpected case ${JSON.stringify(value)}`);
};

/** Declares one kind of item. */
export const defineEntity = <T extends string, PK extends object, SK extends object, M = never>(
  spec: EntitySpec<T, PK, SK, M>,
): Entity<T, PK, SK, M> => new Entity(spec);
