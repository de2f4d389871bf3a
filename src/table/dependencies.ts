/**
 * Dependency tags: names for what an answer read, and for what a change of the table can
 * change. The response cache (src/pipeline/responseCache/) files every answer under the tags of
 * its reads and evicts by the tags of each change; both sides are derived from the entity
 * declarations (entities/), with the templates that build the keys:
 *
 * - a point read of an item depends on the item's own tags (its declaration's `tags`);
 * - a Query depends on the tags of the range it reads (entities/ranges.ts), which the page
 *   query carries from where it is built (src/db/pageQueries.ts);
 * - a change of an item maps to its own tags and to the tags of every range its old and its
 *   new image lie in (a product moving category leaves one category's pages and joins another's).
 *
 * A key the templates cannot read in full still maps to tags, never to nothing and never to
 * text a receiver would refuse: a parameter outside the tags' alphabet (an import's
 * `PRODUCT#sku.import-42`) is digested (entities/tags.ts), and a key in a known partition whose
 * sort key is of no declared shape maps to what its partition tells, widening to a kind's bare
 * name where a parameter is missing. A key no declaration recognises lies in no range an answer
 * reads by its key; the image's index keys still name the index ranges it lies in.
 *
 * The tag table of docs/caching.md is generated from the same declarations (`npm run docs`).
 */
import { identityOf } from './entities/nodes.js';
import { matchKey } from './entities/registry.js';
import { RANGES } from './entities/ranges.js';
import { TAGS } from './entities/tags.js';
import type { ItemKey } from './entities/template.js';
import type { NodeModel } from './models.js';

export { isIndexTag, isPublicTag, kindOfTag, TAG_PATTERN, TAGS } from './entities/tags.js';

export const productTag = (productId: string): string => TAGS.product.of(productId);
export const categoryTag = (category: string): string => TAGS.category.of(category);
export const emailTag = (normalizedEmail: string): string => TAGS.email.of(normalizedEmail);

/**
 * The tags of one item's own key (what a point read of it depends on), or undefined for a key
 * of no declared kind, or of a kind no answer reads by key: an answer that read it is not cached.
 */
export function itemTags(key: ItemKey): string[] | undefined {
  const match = matchKey(key);
  if (match?.kind !== 'item') return undefined;
  const tags = match.entity.tagsOf(match.params);
  return tags.length > 0 ? tags : undefined;
}

/** An image's attributes that matter here: the table's key and the keys ranges are read by. */
export type ItemImage = Readonly<Record<string, string | undefined>>;

function ownTags(key: ItemKey): string[] {
  const match = matchKey(key);
  if (!match) return [];
  if (match.kind === 'item') return match.entity.tagsOf(match.params);
  // A sort key of no declared shape: what each kind of the partition can say from its partition key.
  return match.entities.flatMap((entity) => entity.tagsOf(match.params));
}

/** The tags one image of an item belongs to: its own and those of the ranges it lies in. */
export function tagsOfImage(image: ItemImage): string[] {
  const { PK, SK } = image;
  if (PK === undefined || SK === undefined) return [];
  const tags = ownTags({ PK, SK });
  for (const range of RANGES) tags.push(...range.tagsOfImage(image));
  return tags;
}

/** The attributes of an image that tagsOfImage reads: the key, and every range's partition and bounds. */
const IMAGE_ATTRIBUTES = [
  ...new Set([
    'PK',
    'SK',
    ...RANGES.flatMap(({ spec }) => [spec.partition.attribute, ...(spec.within ? [spec.within.attribute] : [])]),
  ]),
];

/** An AttributeValue map, as a stream record's Keys/OldImage/NewImage hold it (strings only matter here). */
export type AttributeMap = Record<string, unknown>;

function imageOf(image: AttributeMap): ItemImage {
  const strings: Record<string, string | undefined> = {};
  for (const name of IMAGE_ATTRIBUTES) {
    const value = image[name] as { S?: unknown } | undefined;
    strings[name] = typeof value?.S === 'string' ? value.S : undefined;
  }
  return strings;
}

/**
 * The tags a stream record can change: those of its old and its new image (a stock change
 * invalidates the product and its category's pages, the in-stock ones included; a category
 * change both categories). Without images (a KEYS_ONLY stream) the keys alone give what they
 * can, as for a write's touched keys. Records of kinds no answer reads (checkpoints, leases,
 * sale markers, migration records) give none.
 */
export function tagsOfChange(record: {
  Keys?: AttributeMap | undefined;
  OldImage?: AttributeMap | undefined;
  NewImage?: AttributeMap | undefined;
}): string[] {
  const tags = new Set<string>();
  for (const image of [record.OldImage, record.NewImage]) {
    if (image) for (const tag of tagsOfImage(imageOf(image))) tags.add(tag);
  }
  if (tags.size === 0 && record.Keys) {
    const { PK, SK } = imageOf(record.Keys);
    if (PK !== undefined && SK !== undefined) for (const tag of tagsOfWrite({ PK, SK })) tags.add(tag);
  }
  return [...tags];
}

/**
 * The tags a write of `key` may have changed, from the key alone (what a write reports as
 * `touched`): the writing instance evicts them before it answers. The ranges of the table's
 * own key follow from the key; an index range the item's attributes place it in is its
 * declaration's `writeTags` (an order's every shop-wide view of its shard, a product's shard of
 * the shop-wide listings), or is covered otherwise (a product that joins a category changes
 * the category's counter, touched too; a page lists its items, so it carries their tags).
 */
export function tagsOfWrite(key: ItemKey): string[] {
  const tags = tagsOfImage({ PK: key.PK, SK: key.SK });
  const match = matchKey(key);
  if (match?.kind === 'item') tags.push(...(match.entity.spec.writeTags?.(match.params) ?? []));
  return [...new Set(tags)];
}

/**
 * The tags of a node as a write left it: those of its item's image, ranges included (a product
 * back in stock, or moved, joins its category's pages, which its touched key does not show).
 */
export function tagsOfWritten(node: NodeModel): string[] {
  const item = identityOf(node.kind).entity.codec.toItem(node);
  const image: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(item)) if (typeof value === 'string') image[name] = value;
  return tagsOfImage(image);
}
