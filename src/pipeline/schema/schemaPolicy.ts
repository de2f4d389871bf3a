/**
 * Per-field policy, read from the directives of schema.graphql, once per schema: which fields
 * everyone may read and share in caches (`@public`, on a type or a field), and what a field
 * costs in the estimate (`@cost(weight:)`, `@listSize(...)`, after the GraphQL Cost Directives
 * specification). No list of schema members is kept anywhere else: HTTP caching, the response
 * cache's scope and the cost estimate all ask this module. `documentReadsOnlyPublicData` is the
 * static judgement of a document (every field it selects is public), which admission hands
 * forward and the response cache scopes its entries by.
 *
 * `policyProblems` checks the directives against the schema and the entity declarations (a
 * slicing argument the field does not take, a sized field its type lacks, a node kind the
 * declarations do not know or whose visibility disagrees): buildSchema refuses to start with
 * any, and a unit test runs it.
 */
import {
  getDirectiveValues,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  GraphQLScalarType,
  OperationTypeNode,
  parse,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { DocumentNode, GraphQLDirective, GraphQLField, GraphQLNamedType, GraphQLSchema } from 'graphql';
import { identityOf, NODE_KINDS } from '../../table/entities/nodes.js';
import type { NodeKind } from '../../table/entities/nodes.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../table/limits.js';

/** What a field costs: its weight, and how many times its selection counts given its arguments. */
export interface FieldCost {
  readonly weight: number;
  readonly count: (args: Record<string, unknown>) => number;
}

interface ListSize {
  assumedSize?: number;
  slicingArguments?: string[];
  sizedFields?: string[];
  requireOneSlicingArgument: boolean;
}

export interface SchemaPolicy {
  /** Whether anyone may read `field` and share the answer (`@public` on it or on its type). */
  isPublic(field: GraphQLField<unknown, unknown>): boolean;
  /** The field's weight and multiplier in the cost estimate. */
  costOf(field: GraphQLField<unknown, unknown>): FieldCost;
}

/** A list the directives give no size counts as the largest page. */
const UNKNOWN_LIST_LENGTH = MAX_PAGE_SIZE;
const once = () => 1;
const ONCE: FieldCost = { weight: 1, count: once };

type Field = GraphQLField<unknown, unknown>;

function directiveOf(schema: GraphQLSchema, name: string): GraphQLDirective {
  const directive = schema.getDirective(name);
  if (!directive) throw new Error(`schema.graphql does not declare @${name}`);
  return directive;
}

/** The fields and types of the schema the directives read (introspection types excluded). */
function* fieldsOf(schema: GraphQLSchema): Generator<[GraphQLNamedType, Field]> {
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || (!isObjectType(type) && !isInterfaceType(type))) continue;
    for (const field of Object.values(type.getFields())) yield [type, field];
  }
}

/** Whether the definition of `member` carries `directive`. */
const isMarked = (directive: GraphQLDirective, member: { astNode?: ConstDirectiveHolder | null | undefined }) =>
  member.astNode ? getDirectiveValues(directive, member.astNode) !== undefined : false;
type ConstDirectiveHolder = Parameters<typeof getDirectiveValues>[1];

/** The `@listSize` of a field, if it has one (graphql coerced its arguments against the declaration). */
const listSizeOf = (directive: GraphQLDirective, field: Field): ListSize | undefined =>
  field.astNode ? (getDirectiveValues(directive, field.astNode) as ListSize | undefined) : undefined;

/** How a `@listSize` counts, given the field's arguments. */
function sizeOf({ assumedSize, slicingArguments = [] }: ListSize): (args: Record<string, unknown>) => number {
  return (args) => {
    for (const name of slicingArguments) {
      const value = args[name];
      // A size above the largest page is refused by the field itself, with a clearer message.
      if (typeof value === 'number') return Math.min(Math.max(value, 1), MAX_PAGE_SIZE);
      if (Array.isArray(value)) return Math.max(value.length, 1);
    }
    return assumedSize ?? UNKNOWN_LIST_LENGTH;
  };
}

function readPolicy(schema: GraphQLSchema): SchemaPolicy {
  const publicDirective = directiveOf(schema, 'public');
  const costDirective = directiveOf(schema, 'cost');
  const listSizeDirective = directiveOf(schema, 'listSize');
  const publicFields = new Set<Field>();
  const costs = new Map<Field, FieldCost>();
  // Lists a connection's `sizedFields` names: the connection's size already counts them.
  const sizedByParent = new Set<string>();
  const listSizes = new Map<Field, ListSize>();
  for (const [, field] of fieldsOf(schema)) {
    const listSize = listSizeOf(listSizeDirective, field);
    if (!listSize) continue;
    listSizes.set(field, listSize);
    const returned = getNamedType(field.type).name;
    for (const sized of listSize.sizedFields ?? []) sizedByParent.add(`${returned}.${sized}`);
  }
  for (const [type, field] of fieldsOf(schema)) {
    if (isMarked(publicDirective, type) || isMarked(publicDirective, field)) publicFields.add(field);
    const weight = (field.astNode && getDirectiveValues(costDirective, field.astNode)?.weight) as number | undefined;
    const listSize = listSizes.get(field);
    const isList = isListType(getNullableType(field.type));
    const count =
      listSize !== undefined
        ? sizeOf(listSize)
        : isList && !sizedByParent.has(`${type.name}.${field.name}`)
          ? () => UNKNOWN_LIST_LENGTH
          : undefined;
    if (weight !== undefined || count !== undefined) costs.set(field, { weight: weight ?? 1, count: count ?? once });
  }
  return { isPublic: (field) => publicFields.has(field), costOf: (field) => costs.get(field) ?? ONCE };
}

const policies = new WeakMap<GraphQLSchema, SchemaPolicy>();

/** The policy of `schema`, read from its directives on first use. */
export function schemaPolicy(schema: GraphQLSchema): SchemaPolicy {
  let policy = policies.get(schema);
  if (!policy) policies.set(schema, (policy = readPolicy(schema)));
  return policy;
}

/** What is wrong with the directives of `schema`, and with its nodes against the entity declarations. */
export function policyProblems(schema: GraphQLSchema): string[] {
  const problems: string[] = [];
  const policy = schemaPolicy(schema);
  const publicDirective = directiveOf(schema, 'public');
  const listSizeDirective = directiveOf(schema, 'listSize');
  const publicType = (named: GraphQLNamedType): boolean =>
    isUnionType(named)
      ? named.getTypes().every((member) => isMarked(publicDirective, member))
      : isMarked(publicDirective, named);
  const roots = new Set([schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean));
  for (const [type, field] of fieldsOf(schema)) {
    const where = `${type.name}.${field.name}`;
    const named = getNamedType(field.type);
    if (policy.isPublic(field)) {
      if (roots.has(type as never))
        problems.push(`${where}: @public on a ${type.name} field (only queries are shared)`);
      // A public field's objects must be public too, or no document through it is.
      if (isCompositeType(named) && !publicType(named))
        problems.push(`${where}: @public, but its type ${named.name} is not`);
    }
    const listSize = listSizeOf(listSizeDirective, field);
    if (!listSize) continue;
    const slicing = listSize.slicingArguments ?? [];
    for (const name of slicing) {
      const arg = field.args.find((candidate) => candidate.name === name);
      const argType = arg && getNullableType(arg.type);
      if (!arg || !(isListType(argType) || (argType instanceof GraphQLScalarType && argType.name === 'Int'))) {
        problems.push(`${where}: @listSize slicing argument ${name} is not an Int or list argument of the field`);
      }
    }
    if (listSize.requireOneSlicingArgument && slicing.length > 0) {
      // The schema's own validation then enforces the rule: one argument, required.
      const only = slicing.length === 1 && field.args.find((arg) => arg.name === slicing[0]);
      if (!only || !isNonNullType(only.type)) {
        problems.push(`${where}: @listSize requires one slicing argument, but the field does not require it`);
      }
    }
    for (const name of listSize.sizedFields ?? []) {
      const sized = isObjectType(named) || isInterfaceType(named) ? named.getFields()[name] : undefined;
      if (!sized || !isListType(getNullableType(sized.type))) {
        problems.push(`${where}: @listSize sized field ${name} is not a list field of ${named.name}`);
      }
    }
    if (!isListType(getNullableType(field.type)) && !listSize.sizedFields?.length) {
      problems.push(`${where}: @listSize on a field that is not a list and sizes none`);
    }
    // A connection without first or last reads the default page: the estimate must count that.
    if (listSize.sizedFields?.length && listSize.assumedSize !== DEFAULT_PAGE_SIZE) {
      problems.push(`${where}: a connection's assumedSize must be the default page (${DEFAULT_PAGE_SIZE})`);
    }
  }
  problems.push(...nodeProblems(schema, policy));
  return problems;
}

/** Every type implementing Node is a declared node kind, public exactly when its declaration is. */
function nodeProblems(schema: GraphQLSchema, policy: SchemaPolicy): string[] {
  const node = schema.getType('Node');
  if (!isInterfaceType(node)) return ['schema.graphql has no Node interface'];
  const implementations = schema.getPossibleTypes(node);
  const problems: string[] = [];
  for (const type of implementations) {
    if (!(NODE_KINDS as readonly string[]).includes(type.name)) {
      problems.push(`${type.name} implements Node, but no entity declaration names that node kind`);
      continue;
    }
    const declared = identityOf(type.name as NodeKind).visibility.kind === 'public';
    const marked = Object.values(type.getFields()).every((field) => policy.isPublic(field));
    if (declared !== marked) {
      problems.push(
        `${type.name}: its declaration is ${declared ? '' : 'not '}public, its type is ${marked ? '' : 'not '}@public`,
      );
    }
  }
  for (const kind of NODE_KINDS) {
    if (!implementations.some((type) => type.name === kind))
      problems.push(`node kind ${kind} is no type implementing Node`);
  }
  return problems;
}

/** Throws with every problem of the schema's policy: a server does not start on a policy that names what is not there. */
export function assertSchemaPolicy(schema: GraphQLSchema): GraphQLSchema {
  const problems = policyProblems(schema);
  if (problems.length > 0) throw new Error(`schema.graphql's policy directives are wrong:\n- ${problems.join('\n- ')}`);
  return schema;
}

/** True when `document` is one query that selects public fields only (no introspection). */
export function readsOnlyPublicData(schema: GraphQLSchema, document: string): boolean {
  let ast;
  try {
    ast = parse(document);
  } catch {
    return false;
  }
  return documentReadsOnlyPublicData(schema, ast);
}

/**
 * readsOnlyPublicData of a parsed document: every field it selects is `@public` in
 * schema.graphql (on the field, or on its type). A field or type without it (a new one, say)
 * makes the document private: the safe default.
 */
export function documentReadsOnlyPublicData(schema: GraphQLSchema, ast: DocumentNode): boolean {
  const policy = schemaPolicy(schema);
  const typeInfo = new TypeInfo(schema);
  let isPublic = true;
  visit(
    ast,
    visitWithTypeInfo(typeInfo, {
      OperationDefinition(node) {
        if (node.operation !== OperationTypeNode.QUERY) isPublic = false;
      },
      Field(node) {
        if (node.name.value === '__typename') return;
        const field = typeInfo.getFieldDef();
        if (!field || !policy.isPublic(field)) isPublic = false;
      },
    }),
  );
  return isPublic;
}
