/**
 * What the type system cannot see about a registry of declarations, checked by a unit test
 * (test/unit/entityRegistry.test.ts): every kind's key parses back as that kind and no other,
 * every tag a declaration derives names a parameter its template has, a public kind names only
 * public tags (and a private one only private tags), every node kind decodes from its own
 * item under its entity's visibility, and every kind of change event comes from an item of the
 * registry that decodes to its node. A kind added with a mistake in any of these fails there.
 */
import type { NodeModel } from '../models.js';
import type { Range } from './entity.js';
import type { NodeIdentity } from './nodes.js';
import { keyMatcher } from './registry.js';
import type { AnyEntity } from './registry.js';
import type { TagRef } from './tags.js';
import type { KeyTemplate } from './template.js';

/** The template's parameters with their example values. */
const examplesOf = (...templates: KeyTemplate<object>[]): Record<string, unknown> =>
  Object.fromEntries(templates.flatMap((template) => template.params.map((param) => [param.name, param.example])));

const paramNames = (...templates: KeyTemplate<object>[]): Set<string> =>
  new Set(templates.flatMap((template) => template.params.map((param) => param.name)));

function tagProblems(where: string, refs: readonly TagRef[], names: Set<string>, isPublic?: boolean): string[] {
  return refs.flatMap(({ kind, args }) => [
    ...args.flatMap((arg) =>
      typeof arg === 'string' && !names.has(arg)
        ? [`${where}: tag ${kind.name} takes ${arg}, which its key lacks`]
        : [],
    ),
    ...(isPublic !== undefined && kind.public !== isPublic
      ? [
          `${where}: a ${isPublic ? 'public' : 'private'} kind names the ${kind.public ? 'public' : 'private'} tag ${kind.name}`,
        ]
      : []),
  ]);
}

/** Every problem of `entities`, `ranges` and `nodes` together; none for a sound registry. */
export function registryProblems(
  entities: readonly AnyEntity[],
  ranges: readonly Range<object>[],
  nodes: Readonly<Record<string, NodeIdentity<NodeModel>>>,
  events: readonly {
    readonly node: string;
    readonly entity: unknown;
    readonly spec: { readonly topics: readonly unknown[] };
  }[] = [],
): string[] {
  const match = keyMatcher(entities);
  const problems: string[] = [];
  for (const entity of entities) {
    const { item, key, tags, visibility } = entity.spec;
    const built = entity.keyOf(examplesOf(key.PK, key.SK));
    const found = match(built);
    if (found?.kind !== 'item' || found.entity !== entity) {
      const other = found?.kind === 'item' ? found.entity.spec.item : 'no kind';
      problems.push(`${item}: its key ${built.PK} / ${built.SK} parses as ${other}`);
    }
    for (const other of entities) {
      if (other !== entity && other.parseKey(built))
        problems.push(`${item}: its key is also a key of ${other.spec.item}`);
    }
    problems.push(...tagProblems(item, tags, paramNames(key.PK, key.SK), visibility === 'public'));
    if (entity.spec.node !== undefined && !entity.spec.codec) problems.push(`${item}: a node without a codec`);
  }
  for (const range of ranges) {
    problems.push(...tagProblems(range.spec.name, range.spec.tags, paramNames(range.spec.partition.template)));
  }
  for (const [kind, identity] of Object.entries(nodes)) {
    const entity = identity.entity as unknown as AnyEntity;
    if (!entities.includes(entity)) problems.push(`node ${kind}: its entity is not in the registry`);
    if (entity.spec.node !== kind)
      problems.push(`node ${kind}: its entity decodes to ${entity.spec.node ?? 'nothing'}`);
    if (entity.spec.visibility !== identity.visibility.kind) {
      problems.push(`node ${kind}: visibility ${identity.visibility.kind}, its entity's ${entity.spec.visibility}`);
    }
  }
  const eventNodes = new Set<string>();
  for (const source of events) {
    const entity = source.entity as AnyEntity;
    const where = `events of ${source.node}`;
    if (eventNodes.has(source.node)) problems.push(`${where}: declared twice`);
    eventNodes.add(source.node);
    if (!entities.includes(entity)) problems.push(`${where}: its item is not in the registry`);
    if (entity.spec.node !== source.node) {
      problems.push(`${where}: its item decodes to ${entity.spec.node ?? 'nothing'}`);
    }
    if (source.spec.topics.length === 0) problems.push(`${where}: no topic, so no subscription can hear them`);
  }
  return problems;
}
