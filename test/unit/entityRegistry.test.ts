/**
 * The registry of declarations (src/table/entities/): sound as it is, and a kind declared with a
 * mistake, or forgotten by a mechanism, fails here or in the typecheck (the `@ts-expect-error`
 * lines below fail `npm run typecheck` the day they stop being errors).
 */
import { describe, expect, it } from 'vitest';
import { registryProblems } from '../../src/table/entities/checks.js';
import { defineEntity, unreachable } from '../../src/table/entities/entity.js';
import { defineEvents } from '../../src/table/entities/events.js';
import type { Visibility } from '../../src/table/entities/entity.js';
import { NODES } from '../../src/table/entities/nodes.js';
import type { NodeRegistry, NodeVisibility } from '../../src/table/entities/nodes.js';
import { RANGES, USER_PK } from '../../src/table/entities/ranges.js';
import { ENTITIES, EVENT_SOURCES, matchKey } from '../../src/table/entities/registry.js';
import type { AnyEntity } from '../../src/table/entities/registry.js';
import { tagOf, TAGS } from '../../src/table/entities/tags.js';
import { id, key } from '../../src/table/entities/template.js';
import { TOPICS } from '../../src/table/entities/topics.js';
import type { NodeModel } from '../../src/table/models.js';

/** A kind a newcomer might add: questions about a product, in its partition. */
const question = (overrides: Partial<Parameters<typeof defineEntity>[0]> = {}): AnyEntity =>
  defineEntity<string, object, object, unknown>({
    type: 'Question',
    item: 'question',
    holds: 'question, answer',
    key: { PK: key`PRODUCT#${id('productId')}`, SK: key`QUESTION#${id('questionId')}` },
    visibility: 'public',
    tags: [tagOf(TAGS.product, 'productId')],
    ...overrides,
  });

const problemsWith = (...extra: AnyEntity[]) => registryProblems([...ENTITIES, ...extra], RANGES, NODES);

describe('the registry', () => {
  it('is sound: every key parses back as its own kind, tags name key parameters, visibility agrees', () => {
    expect(registryProblems(ENTITIES, RANGES, NODES, EVENT_SOURCES)).toEqual([]);
  });

  it('refuses change events of an item outside the registry, or of one that decodes to another node', () => {
    const spec = { ...EVENT_SOURCES[0].spec };
    const stray = defineEvents(question({ node: 'Product', codec: ENTITIES[0].spec.codec as never }) as never, spec);
    expect(registryProblems(ENTITIES, RANGES, NODES, [...EVENT_SOURCES, stray]).join('\n')).toMatch(
      /events of Order: declared twice[\s\S]*its item is not in the registry[\s\S]*its item decodes to Product/,
    );
    const unheard = defineEvents(EVENT_SOURCES[0].entity, { ...spec, topics: [] });
    expect(registryProblems(ENTITIES, RANGES, NODES, [unheard]).join('\n')).toMatch(/no topic/);
    expect(TOPICS.order.of('o-1')).toBe('order:o-1');
  });

  it('accepts a new kind declared without a mistake', () => {
    expect(problemsWith(question())).toEqual([]);
  });

  it.each<[string, AnyEntity, RegExp]>([
    [
      'whose keys are those of another kind',
      question({ key: { PK: USER_PK, SK: key`PROFILE` } }),
      /is also a key of user profile|parses as user profile/,
    ],
    ['whose tag takes a parameter its key lacks', question({ tags: [tagOf(TAGS.order, 'orderId')] }), /lacks/],
    ['that is public but names a private tag', question({ tags: [tagOf(TAGS.user, 'productId')] }), /private tag user/],
    [
      'that is private but names a public tag',
      question({ visibility: 'owner' as Visibility }),
      /private kind names the public tag product/,
    ],
    ['that is a node without a codec', question({ node: 'Product' }), /node without a codec/],
  ])('refuses a kind %s', (_, entity, problem) => {
    expect(problemsWith(entity).join('\n')).toMatch(problem);
  });

  it('refuses a node whose visibility is not its entity’s', () => {
    const nodes = { ...NODES, Product: { ...NODES.Product, visibility: { kind: 'admin' as const } } };
    expect(registryProblems(ENTITIES, RANGES, nodes).join('\n')).toMatch(/node Product: visibility admin/);
  });
});

describe('a node kind forgotten by a mechanism', () => {
  type DummyModel = { kind: 'Dummy'; dummyId: string };

  it('fails the typecheck where the node registry lacks it', () => {
    // @ts-expect-error NODES has no identity for Dummy: a node model without a declaration does not compile.
    const nodes: NodeRegistry<NodeModel | DummyModel> = NODES;
    expect(Object.keys(nodes)).not.toContain('Dummy');
  });

  it('fails the typecheck where a dispatch over visibility lacks its case', () => {
    const rule = (visibility: NodeVisibility<unknown> | { kind: 'friends' }): string => {
      switch (visibility.kind) {
        case 'public':
        case 'owner':
        case 'admin':
          return visibility.kind;
        default:
          // @ts-expect-error 'friends' reaches the never check: a new visibility the rules forgot does not compile.
          return unreachable(visibility);
      }
    };
    expect(() => rule({ kind: 'friends' })).toThrow(/unexpected case/);
  });
});

describe('matchKey (a key to its kind, through the templates that build it)', () => {
  it('finds every kind from a key it built', () => {
    for (const entity of ENTITIES as readonly AnyEntity[]) {
      const { PK, SK } = entity.spec.key;
      const values = Object.fromEntries([...PK.params, ...SK.params].map((param) => [param.name, param.example]));
      const found = matchKey(entity.keyOf(values));
      expect(found?.kind === 'item' && found.entity).toBe(entity);
    }
  });

  it('reads a key an import wrote outside the id rules', () => {
    expect(matchKey({ PK: 'PRODUCT#sku.import-42', SK: 'DETAILS' })).toMatchObject({
      kind: 'item',
      params: { productId: 'sku.import-42' },
    });
  });

  it('names the partition of a key whose sort key is of no declared shape', () => {
    const found = matchKey({ PK: 'USER#u1', SK: 'ORDER#junk' });
    expect(found?.kind).toBe('partition');
    expect(found?.params).toEqual({ userId: 'u1' });
  });

  it('knows nothing of a key of no declared partition', () => {
    expect(matchKey({ PK: 'IMPORT#1', SK: 'ROW#1' })).toBeUndefined();
  });
});
