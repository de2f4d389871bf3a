/**
 * The policy directives of schema.graphql (`@public`, `@cost`, `@listSize`): checked against the
 * schema and the entity declarations (the server refuses to start on a problem), and what
 * clients see of them through introspection.
 */
import { readFileSync } from 'node:fs';
import { buildClientSchema, buildSchema as buildSdl, graphqlSync, getIntrospectionQuery, printSchema } from 'graphql';
import type { IntrospectionQuery } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema, schemaPath } from '../../src/pipeline/schema/schema.js';
import { policyProblems } from '../../src/pipeline/schema/schemaPolicy.js';

const SDL = readFileSync(schemaPath(), 'utf8');

/** The checked-in SDL with `from` replaced by `to` (which must be there). */
function edited(from: string, to: string): string {
  expect(SDL).toContain(from);
  return SDL.replace(from, to);
}

describe('the policy directives', () => {
  it('have no problem in the checked-in schema', () => {
    expect(policyProblems(buildSdl(SDL))).toEqual([]);
    expect(() => buildSchema()).not.toThrow();
  });

  it.each([
    [
      'a slicing argument the field does not take',
      edited('slicingArguments: ["ids"]', 'slicingArguments: ["id"]'),
      /Query\.nodes: @listSize slicing argument id is not/,
    ],
    [
      'a sized field its type lacks',
      edited('sizedFields: ["edges", "nodes"]', 'sizedFields: ["edges", "items"]'),
      /User\.orders: @listSize sized field items is not a list field of OrderConnection/,
    ],
    [
      'a list size on a field that is no list',
      edited('productName: String! @cost(weight: 2)', 'productName: String! @listSize(assumedSize: 2)'),
      /OrderItem\.productName: @listSize on a field that is not a list/,
    ],
    [
      'a required slicing argument the field does not require',
      edited('nodes("Global ids, at most 100." ids: [ID!]!)', 'nodes("Global ids, at most 100." ids: [ID!])'),
      /Query\.nodes: @listSize requires one slicing argument/,
    ],
    [
      'a connection that counts another page than the default',
      edited('assumedSize: 20', 'assumedSize: 10'),
      /a connection's assumedSize must be the default page \(20\)/,
    ],
    [
      'a public field of a private type',
      edited('viewer: User', 'viewer: User @public'),
      /Query\.viewer: @public, but its type User is not/,
    ],
    [
      'a public mutation',
      edited(
        'createProduct(input: CreateProductInput!): CreateProductPayload!',
        'createProduct(input: CreateProductInput!): CreateProductPayload! @public',
      ),
      /Mutation\.createProduct: @public on a Mutation field/,
    ],
    [
      'a node type whose declaration is public, without @public',
      edited('type Product implements Node @public {', 'type Product implements Node {'),
      /Product: its declaration is public, its type is not @public/,
    ],
    [
      'a type implementing Node that no entity declaration names',
      `${SDL}\ntype Invoice implements Node { id: ID! }\n`,
      /Invoice implements Node, but no entity declaration names that node kind/,
    ],
  ])('finds %s', (_, sdl, problem) => {
    expect(policyProblems(buildSdl(sdl)).join('\n')).toMatch(problem);
  });

  it('refuses a directive on a member that does not exist, or a misspelt one (graphql validates the SDL)', () => {
    expect(() => buildSdl(edited('type Money @public {', 'type Money @pubilc {'))).toThrow(
      /Unknown directive "@pubilc"/,
    );
    expect(() => buildSdl(edited('@cost(weight: 20)', '@cost(wieght: 20)'))).toThrow(/wieght/);
  });
});

describe('what introspection shows of them', () => {
  // graphql-js introspection describes directive definitions, never where a directive is
  // applied: clients see three type-system directives they cannot use in operations, and no
  // field's policy (docs/decisions/policy-directives.md).
  const schema = buildSchema();
  const result = graphqlSync({ schema, source: getIntrospectionQuery() });
  const printed = printSchema(buildClientSchema(result.data as unknown as IntrospectionQuery));

  it('declares the directives, applied nowhere', () => {
    expect(result.errors).toBeUndefined();
    expect(printed).toMatch(/directive @public on OBJECT \| FIELD_DEFINITION/);
    expect(printed).toMatch(/directive @listSize\(/);
    // Each name appears once: in its definition.
    for (const name of ['@public', '@cost', '@listSize']) expect(printed.split(name)).toHaveLength(2);
    expect(printed).toContain('type Product implements Node {');
  });

  it('refuses them in an operation', () => {
    const answer = graphqlSync({ schema, source: '{ product(productId: "p1") @public { name } }' });
    expect(answer.errors?.[0]?.message).toMatch(/Directive "@public" may not be used on FIELD/);
  });
});
