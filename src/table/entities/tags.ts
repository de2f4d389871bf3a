/**
 * The kinds of dependency tag: names for what an answer read and for what a change of the table
 * can change (src/table/dependencies.ts derives both from the entity declarations). Each kind is
 * declared once, with whether its data is public (only public tags reach a CDN) and whether it
 * names a range of an eventually consistent global index (the response cache's hold-down).
 *
 * A tag is `<kind>` or `<kind>:<param>[:<param>]` and holds only `A-Z a-z 0-9 _ - :`, so it
 * travels as it is in `Cache-Tag` and `Surrogate-Key` headers and passes TAG_PATTERN on
 * receipt. A parameter outside that alphabet (an email, or an id an import wrote outside the
 * API's rules) is replaced by a digest of it: every side computes the same tag from the same
 * text, and two texts that share a digest only evict each other's answers, never keep one.
 * A kind's bare name (`product`) is its wide form: the tag of an item whose key names the kind
 * but not the parameter.
 */
import { createHash } from 'node:crypto';

/** A tag as it may appear on the wire (an invalidation message, a header): checked on receipt. */
export const TAG_PATTERN = /^[a-z-]{1,16}(:[A-Za-z0-9_-]{1,64}){0,2}$/;
const PARAM = /^[A-Za-z0-9_-]{1,64}$/;

const digest = (text: string): string => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** A parameter as a tag (or a topic) holds it: as it is within the alphabet, else its digest. */
export const paramText = (raw: string): string => (PARAM.test(raw) ? raw : digest(raw));

export interface TagKind {
  /** The tag's first part, and its wide form. */
  readonly name: string;
  /** How the docs name its parameters. */
  readonly params: readonly string[];
  /** Anyone may read what it names (the catalog). */
  readonly public: boolean;
  /** It names a range of an eventually consistent global index. */
  readonly index: boolean;
  /** Its parameters are always digested (they may hold anything, such as an email). */
  readonly hashed: boolean;
  /** What it names (docs). */
  readonly names: string;
  /** The tag of `values`, one per parameter. */
  of(...values: readonly (string | number)[]): string;
  /** The tag of a kind of one parameter (what a key's own tag mostly is), without an array. */
  of1(value: string): string;
  /** How the docs write it: `product:<productId>`. */
  readonly text: string;
}

function tagKind(spec: Omit<TagKind, 'of' | 'of1' | 'text' | 'hashed'> & { hashed?: boolean }): TagKind {
  const hashed = spec.hashed ?? false;
  const encode = (value: string | number): string => {
    const raw = String(value);
    return hashed ? digest(raw) : paramText(raw);
  };
  return {
    ...spec,
    hashed,
    text: [spec.name, ...spec.params.map((param) => `<${hashed ? `hash of ${param}` : param}>`)].join(':'),
    of: (...values) => {
      if (values.length !== spec.params.length) throw new Error(`tag ${spec.name} takes ${spec.params.length} values`);
      let tag = spec.name;
      for (const value of values) tag += `:${encode(value)}`;
      return tag;
    },
    of1: (value) => {
      if (spec.params.length !== 1) throw new Error(`tag ${spec.name} takes ${spec.params.length} values`);
      return `${spec.name}:${encode(value)}`;
    },
  };
}

/** Every kind of tag, by name. */
export const TAGS = {
  product: tagKind({ name: 'product', params: ['productId'], public: true, index: false, names: 'one product item' }),
  category: tagKind({
    name: 'category',
    params: ['category'],
    public: true,
    index: true,
    names: "a category's products in GSI1 and GSI3 (by name, by price), and its counter",
  }),
  products: tagKind({
    name: 'products',
    params: ['shard'],
    public: true,
    index: true,
    names: "one shard of the whole shop's products (GSI4, GSI5)",
  }),
  categories: tagKind({
    name: 'categories',
    params: [],
    public: true,
    index: false,
    names: 'the category counters (`META#categories`)',
  }),
  user: tagKind({
    name: 'user',
    params: ['userId'],
    public: false,
    index: false,
    names: 'one user profile (its order counts included)',
  }),
  userOrders: tagKind({
    name: 'user-orders',
    params: ['userId'],
    public: false,
    index: false,
    names: "a user's orders in their partition (table and LSI1)",
  }),
  order: tagKind({ name: 'order', params: ['orderId'], public: false, index: false, names: 'one order' }),
  orders: tagKind({
    name: 'orders',
    params: ['view', 'shard'],
    public: false,
    index: true,
    names: 'one shard of one view (`ALL` or a status) of the shop-wide orders (GSI2)',
  }),
  reviews: tagKind({
    name: 'reviews',
    params: ['productId'],
    public: true,
    index: false,
    names: "a product's reviews (table and LSI1) and its rating",
  }),
  review: tagKind({ name: 'review', params: ['reviewId'], public: true, index: false, names: 'one review' }),
  email: tagKind({
    name: 'email',
    params: ['email'],
    public: false,
    index: true,
    hashed: true,
    names: 'a user looked up by email (GSI1)',
  }),
} as const satisfies Record<string, TagKind>;

const BY_NAME: ReadonlyMap<string, TagKind> = new Map(Object.values(TAGS).map((kind) => [kind.name, kind]));

/** The kind of a tag, from its first part; undefined for a tag of no declared kind. */
export function kindOfTag(tag: string): TagKind | undefined {
  const colon = tag.indexOf(':');
  return BY_NAME.get(colon < 0 ? tag : tag.slice(0, colon));
}

/** A test of a tag's kind by the kinds' names (a few `startsWith`: it runs for every tag an answer records). */
const tagOfKinds = (kinds: readonly TagKind[]): ((tag: string) => boolean) => {
  const exact = new Set(kinds.map((kind) => kind.name));
  const prefixes = kinds.map((kind) => `${kind.name}:`);
  return (tag) => exact.has(tag) || prefixes.some((prefix) => tag.startsWith(prefix));
};

/** Tags of data anyone may read (the catalog): only these reach a CDN. */
export const isPublicTag = tagOfKinds(Object.values(TAGS).filter((kind) => kind.public));

/**
 * Tags of ranges read from an eventually consistent global index: a stream record can arrive
 * before the index shows its change (the cache's hold-down, see caching.md).
 */
export const isIndexTag = tagOfKinds(Object.values(TAGS).filter((kind) => kind.index));

/** A tag's argument: a parameter of the key it is computed from, or a fixed text. */
export type TagArg = string | { readonly fixed: string };
export const fixed = (value: string): TagArg => ({ fixed: value });

/** A tag a declaration derives from the parameters of a key (or of an index key). */
export interface TagRef {
  readonly kind: TagKind;
  readonly args: readonly TagArg[];
  /** The tag from the texts a key held (the kind's wide form where one is missing), compiled once. */
  readonly of: (params: Readonly<Record<string, string | undefined>>) => string;
}

export const tagOf = (kind: TagKind, ...args: TagArg[]): TagRef => {
  if (args.length !== kind.params.length) throw new Error(`tag ${kind.name} takes ${kind.params.length} arguments`);
  const [only] = args;
  // One parameter of the key, the common case, without an array per tag.
  if (args.length === 1 && typeof only === 'string') {
    return {
      kind,
      args,
      of: (params) => {
        // A range's values may be numbers (a shard); a key's texts are strings.
        const value = params[only] as string | number | undefined;
        return value === undefined || value === '' ? kind.name : kind.of1(String(value));
      },
    };
  }
  const of = (params: Readonly<Record<string, string | undefined>>): string => {
    const values: string[] = [];
    for (const arg of args) {
      const value = typeof arg === 'string' ? params[arg] : arg.fixed;
      if (value === undefined || value === '') return kind.name;
      values.push(value);
    }
    return kind.of(...values);
  };
  return { kind, args, of };
};

/**
 * The tags of `refs` given the texts a key held. A parameter the key did not give (a key in a
 * known partition whose sort key is of no declared shape) gives the kind's wide form.
 */
export function evaluateTags(refs: readonly TagRef[], params: Readonly<Record<string, string | undefined>>): string[] {
  const tags: string[] = [];
  for (const ref of refs) tags.push(ref.of(params));
  return tags;
}

/** How the docs write a derived tag: `orders:ALL:<shard>`. */
export const tagRefText = ({ kind, args }: TagRef): string =>
  [
    kind.name,
    ...args.map((arg) => (typeof arg !== 'string' ? arg.fixed : kind.hashed ? `<hash of ${arg}>` : `<${arg}>`)),
  ].join(':');
