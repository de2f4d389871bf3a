/**
 * A cost limit that knows every list: a list field's selection costs as many times as the list
 * holds, and large fields weigh more. How much is the schema's policy, in its directives
 * (schemaPolicy.ts, after the GraphQL Cost Directives specification): `@listSize` says how many
 * elements a list counts (a connection's `first`/`last` or its default page, the ids of
 * `nodes(ids:)`, the lines an order typically holds rather than the most it may), `@cost` what a
 * field weighs (text fields by their longest value); `__typename` weighs 1 like any field. The
 * estimate is the fast first refusal, made before anything runs; the operation meter (meter.ts)
 * is the guarantee, holding what the data turns out to hold to its budgets while the answer is
 * built (docs/security.md has the figures). graphql-armor's own cost limit counts fields without
 * list sizes, so this one (graphql-query-complexity, run after variables are known) replaces it.
 */
import {
  getOperationAST,
  isInputObjectType,
  isInputType,
  isListType,
  isNonNullType,
  isScalarType,
  typeFromAST,
} from 'graphql';
import type { DocumentNode, GraphQLField, GraphQLInputObjectType, GraphQLInputType, GraphQLSchema } from 'graphql';
import { getComplexity, simpleEstimator } from 'graphql-query-complexity';
import type { ComplexityEstimator } from 'graphql-query-complexity';
import { schemaPolicy } from '../schema/schemaPolicy.js';
import type { SchemaPolicy } from '../schema/schemaPolicy.js';

/**
 * The estimator, pure: what the field `owner.field` costs given its arguments and the cost of
 * its selection: its weight, plus its selection times the elements its list size counts (a
 * connection's selection by its page: its `edges` and `nodes` are that page and count once).
 */
export function fieldCost(
  policy: SchemaPolicy,
  owner: string,
  field: GraphQLField<unknown, unknown>,
  args: Record<string, unknown>,
  childComplexity: number,
): number {
  // Introspection reads the schema in memory, not the table; whether it is allowed at all is
  // the introspection setting's business.
  // `__typename` is an entry of the answer like any other field.
  if (field.name === '__typename') return 1;
  if (owner.startsWith('__') || field.name.startsWith('__')) return 0;
  const { weight, count } = policy.costOf(field);
  return weight + childComplexity * count(args);
}

/**
 * Costs already worked out, per document: the cost is a pure function of the schema, the
 * document, the operation and the variables, and a repeated request (a cache hit above all)
 * need not walk its document again. The limit is still checked on every request.
 *
 * Only what can change the estimate is part of the key: the estimator reads numbers (`first`,
 * `last`), list lengths (`ids`) and booleans (@skip/@include), never the text of a `String` or
 * `ID`. A string where the variable's type takes a `String` or `ID` (any string coerces to
 * either) is therefore keyed as "a string", at any depth: a variable of that type, each element
 * of a list of them, or a field of an input object (a mutation's `input`). So the page of every
 * user's orders, whatever the user, is worked out once, and so is every order placed with the
 * same number of lines and quantities, whatever its idempotency key. A list keeps its length,
 * and every other value is keyed as it is. A variable holding something else than a string
 * where a text goes is not remembered at all (it may well not coerce; the estimate says so).
 */
const costsBySchema = new WeakMap<GraphQLSchema, WeakMap<object, Map<string, Costs>>>();
/** Variable sets remembered per document and operation, at most (the oldest go first). */
const COSTS_PER_DOCUMENT = 256;

/** How a value of one input type is keyed: texts as "a string", the rest as they are. */
type Keying = 'text' | 'kept' | { list: Keying } | { fields: Map<string, Keying> };

interface Costs {
  /** How each variable of the operation is keyed; none when every one is kept as it is. */
  keyings: ReadonlyMap<string, Keying> | undefined;
  byVariables: Map<string, number>;
}

/** What a string stands for in a key. */
const TEXT = Object.freeze({ text: true });

function keyingOf(type: GraphQLInputType, inputs: Map<GraphQLInputObjectType, Keying>): Keying {
  const named = isNonNullType(type) ? type.ofType : type;
  if (isListType(named)) {
    const item = keyingOf(named.ofType, inputs);
    return item === 'kept' ? 'kept' : { list: item };
  }
  if (isScalarType(named)) return named.name === 'String' || named.name === 'ID' ? 'text' : 'kept';
  if (!isInputObjectType(named)) return 'kept';
  // An input type may hold itself: its keying is shared before its fields are worked out.
  const known = inputs.get(named);
  if (known) return known;
  const fields = new Map<string, Keying>();
  const keying = { fields };
  inputs.set(named, keying);
  for (const field of Object.values(named.getFields())) fields.set(field.name, keyingOf(field.type, inputs));
  return keying;
}

function keyingsOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
): Map<string, Keying> | undefined {
  const operation = getOperationAST(document, operationName);
  const keyings = new Map<string, Keying>();
  const inputs = new Map<GraphQLInputObjectType, Keying>();
  for (const definition of operation?.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type);
    const keying = type && isInputType(type) ? keyingOf(type, inputs) : 'kept';
    if (keying !== 'kept') keyings.set(definition.variable.name.value, keying);
  }
  return keyings.size > 0 ? keyings : undefined;
}

/** The key of `variables` among the costs of one operation (see above), or undefined when they are not remembered. */
function variablesKey(variables: Record<string, unknown>, keyings: Costs['keyings']): string | undefined {
  if (!keyings) return JSON.stringify(variables);
  let remembered = true;
  const keyOf = (value: unknown, keying: Keying): unknown => {
    if (keying === 'kept' || value === null || value === undefined) return value;
    if (keying === 'text') {
      if (typeof value === 'string') return TEXT;
      remembered = false;
      return value;
    }
    // A single value where a list goes is coerced to a list of one.
    if ('list' in keying)
      return Array.isArray(value) ? value.map((item) => keyOf(item, keying.list)) : keyOf(value, keying.list);
    if (typeof value !== 'object' || Array.isArray(value)) {
      remembered = false;
      return value;
    }
    const keyed: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(value)) keyed[name] = keyOf(field, keying.fields.get(name) ?? 'kept');
    return keyed;
  };
  const keyed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(variables)) keyed[name] = keyOf(value, keyings.get(name) ?? 'kept');
  return remembered ? JSON.stringify(keyed) : undefined;
}

export function queryCost(
  schema: GraphQLSchema,
  query: Parameters<typeof getComplexity>[0]['query'],
  variables: Record<string, unknown>,
  operationName?: string,
): number {
  let byDocument = costsBySchema.get(schema);
  if (!byDocument) costsBySchema.set(schema, (byDocument = new WeakMap()));
  let byOperation = byDocument.get(query);
  if (!byOperation) byDocument.set(query, (byOperation = new Map<string, Costs>()));
  const name = operationName ?? '';
  let costs = byOperation.get(name);
  if (!costs) {
    costs = { keyings: keyingsOf(schema, query, operationName), byVariables: new Map() };
    // A document's operations are few (the parser's token limit bounds them).
    byOperation.set(name, costs);
  }
  const key = variablesKey(variables, costs.keyings);
  if (key === undefined) return computeCost(schema, query, variables, operationName);
  const known = costs.byVariables.get(key);
  if (known !== undefined) return known;
  const cost = computeCost(schema, query, variables, operationName);
  if (costs.byVariables.size >= COSTS_PER_DOCUMENT)
    costs.byVariables.delete(costs.byVariables.keys().next().value as string);
  costs.byVariables.set(key, cost);
  return cost;
}

function computeCost(
  schema: GraphQLSchema,
  query: Parameters<typeof getComplexity>[0]['query'],
  variables: Record<string, unknown>,
  operationName?: string,
): number {
  const policy = schemaPolicy(schema);
  const estimator: ComplexityEstimator = ({ type, field, args, childComplexity }) =>
    fieldCost(policy, type.name, field, args, childComplexity);
  return getComplexity({
    schema,
    query,
    variables,
    operationName,
    estimators: [estimator, simpleEstimator({ defaultComplexity: 1 })],
  });
}
