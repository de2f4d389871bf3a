/**
 * The tables of the data model, rendered from the entity declarations (src/table/entities/):
 * the items, keys and indexes and the ranges the Queries read into docs/access-patterns.md, the
 * dependency tags into docs/caching.md, the change events and their topics into
 * docs/subscriptions.md. A kind, range, tag, event or topic declared in the code is in the docs,
 * and the docs name no other.
 */
import path from 'node:path';
import type { Range } from '../../src/table/entities/entity.js';
import { RANGES } from '../../src/table/entities/ranges.js';
import { ENTITIES, EVENT_SOURCES } from '../../src/table/entities/registry.js';
import type { AnyEntity } from '../../src/table/entities/registry.js';
import { TAGS, tagRefText } from '../../src/table/entities/tags.js';
import type { TagKind, TagRef } from '../../src/table/entities/tags.js';
import type { KeyTemplate } from '../../src/table/entities/template.js';
import { TOPICS } from '../../src/table/entities/topics.js';
import { renderBlocks, table } from './blocks.js';

export const ACCESS_PATTERNS_PAGE = path.join('docs', 'access-patterns.md');
export const CACHING_PAGE = path.join('docs', 'caching.md');
export const SUBSCRIPTIONS_PAGE = path.join('docs', 'subscriptions.md');
const SCRIPT = 'src/table/entities/ or scripts/docs/model.ts';

const code = (text: string) => `\`${text}\``;
const keyText = (attribute: string, template: KeyTemplate<object>) => `${attribute} ${code(template.text)}`;
const tagsText = (refs: readonly TagRef[]) => refs.map((ref) => code(tagRefText(ref))).join(', ');
const entities = ENTITIES as readonly AnyEntity[];

/** The template `entity` keeps in `attribute` (its key's, or an index key's). */
function templateIn(entity: AnyEntity, attribute: string): KeyTemplate<object> | undefined {
  const { key, indexes = {} } = entity.spec;
  if (attribute === 'PK' || attribute === 'SK') return key[attribute];
  return (indexes as Record<string, KeyTemplate<object> | undefined>)[attribute];
}

/** The ranges an item of `entity` lies in: its template in the range's partition attribute is the range's. */
export function rangesOf(entity: AnyEntity): Range<object>[] {
  return RANGES.filter(({ spec }) => {
    if (templateIn(entity, spec.partition.attribute) !== spec.partition.template) return false;
    const within = spec.within;
    return !within || (templateIn(entity, within.attribute)?.prefix.startsWith(within.prefix) ?? false);
  });
}

function items(): string {
  return table(
    [
      'item',
      '`entityType`',
      'PK',
      'SK',
      'index keys',
      'visibility',
      'tags (its own; of the ranges it lies in)',
      'holds',
    ],
    entities.map((entity) => {
      const { item, type, key, indexes = {}, visibility, tags, holds } = entity.spec;
      const indexKeys = Object.entries(indexes as Record<string, KeyTemplate<object>>)
        .map(([attribute, template]) => keyText(attribute, template))
        .join('; ');
      const rangeTags = rangesOf(entity).flatMap((range) => range.spec.tags);
      const tagCell = [tagsText(tags), tagsText(rangeTags)].filter(Boolean).join('; ');
      return [
        item,
        code(type),
        code(key.PK.text),
        code(key.SK.text),
        indexKeys || '–',
        visibility,
        tagCell || '–',
        holds,
      ];
    }),
  );
}

function ranges(): string {
  return table(
    ['range', 'index', 'partition', 'sort keys', 'tags', 'access patterns'],
    RANGES.map(({ spec }) => [
      spec.name,
      spec.indexes.join(', '),
      keyText(spec.partition.attribute, spec.partition.template) +
        (spec.within ? `, ${spec.within.attribute} from ${code(spec.within.prefix)}` : ''),
      spec.sorts.map(({ attribute, template }) => keyText(attribute, template)).join('; ') || '–',
      tagsText(spec.tags),
      spec.patterns,
    ]),
  );
}

function tags(): string {
  const yes = (flag: boolean) => (flag ? 'yes' : 'no');
  const naming = (refs: readonly TagRef[], kind: TagKind) => refs.some((ref) => ref.kind === kind);
  return table(
    [
      'tag',
      'names',
      'the own tag of (read by key, or listed by a page)',
      'the tag of (a Query of)',
      'public',
      'global index',
    ],
    Object.values(TAGS).map((kind: TagKind) => [
      code(kind.text),
      kind.names,
      entities
        .filter((entity) => naming(entity.spec.tags, kind))
        .map((entity) => entity.spec.item)
        .join('; ') || '–',
      RANGES.filter(({ spec }) => naming(spec.tags, kind))
        .map(({ spec }) => spec.name)
        .join('; ') || '–',
      yes(kind.public),
      yes(kind.index),
    ]),
  );
}

function events(): string {
  return table(
    ['events about', 'from the changes of', 'types', 'topics'],
    EVENT_SOURCES.map(({ node, entity, spec }) => [
      node,
      entity.spec.item,
      spec.types.map(code).join(', '),
      spec.topics.map(({ kind }) => code(kind.text)).join(', '),
    ]),
  );
}

function topics(): string {
  return table(
    ['topic', 'carries'],
    Object.values(TOPICS).map((kind) => [code(kind.text), kind.carries]),
  );
}

export const renderAccessPatterns = (): string =>
  renderBlocks(ACCESS_PATTERNS_PAGE, SCRIPT, [
    ['items', items],
    ['ranges', ranges],
  ]);

export const renderCachingTags = (): string => renderBlocks(CACHING_PAGE, SCRIPT, [['tags', tags]]);

export const renderSubscriptionEvents = (): string =>
  renderBlocks(SUBSCRIPTIONS_PAGE, SCRIPT, [
    ['events', events],
    ['topics', topics],
  ]);
