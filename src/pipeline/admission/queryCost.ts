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
import { getOperationAST, Kind } from 'graphql';
import type { DocumentNode, GraphQLField, GraphQLSchema, TypeNode } from 'graphql';
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
 * Only the variables that can change the estimate are part of the key: the estimator reads
 * numbers (`first`, `last`), list lengths (`ids`) and booleans (@skip/@include), never the
 * text of a `String` or `ID`. A string given for a variable declared `String` or `ID` (any
 * string coerces to either) is therefore keyed as "a string", so the page of every user's
 * orders, whatever the user, is worked out once; a list of strings given for a list of them
 * (`[ID!]!`, say) is keyed by its length alone. Any other value, and every variable of another
 * type, is keyed as it is.
 */
const costsBySchema = new WeakMap<GraphQLSchema, WeakMap<object, Map<string, Costs>>>();
/** Variable sets remembered per document and operation, at most (the oldest go first). */
const COSTS_PER_DOCUMENT = 256;

/** A variable whose strings cannot change the cost: a text (`ID!`) or a list of texts (`[ID!]!`). */
type TextKind = 'text' | 'texts';

interface Costs {
  /** The operation's variables whose string values cannot change its cost. */
  textVariables: ReadonlyMap<string, TextKind>;
  byVariables: Map<string, number>;
}

const nullable = (type: TypeNode): TypeNode => (type.kind === Kind.NON_NULL_TYPE ? type.type : type);

/** `String`, `ID`, `String!` or `ID!`: a type any string coerces to. */
const isTextType = (type: TypeNode): boolean => {
  const named = nullable(type);
  return named.kind === Kind.NAMED_TYPE && (named.name.value === 'String' || named.name.value === 'ID');
};

function textVariablesOf(document: DocumentNode, operationName: string | undefined): Map<string, TextKind> {
  const operation = getOperationAST(document, operationName);
  const kinds = new Map<string, TextKind>();
  for (const definition of operation?.variableDefinitions ?? []) {
    const type = nullable(definition.type);
    if (isTextType(type)) kinds.set(definition.variable.name.value, 'text');
    else if (type.kind === Kind.LIST_TYPE && isTextType(type.type)) kinds.set(definition.variable.name.value, 'texts');
  }
  return kinds;
}

/** The key of `variables` among the costs of one operation (see above). */
function variablesKey(variables: Record<string, unknown>, textVariables: ReadonlyMap<string, TextKind>): string {
  if (textVariables.size === 0) return JSON.stringify(variables);
  const keyed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(variables)) {
    const kind = textVariables.get(name);
    if (kind === 'text' && typeof value === 'string') keyed[name] = { text: true };
    else if (kind === 'texts' && Array.isArray(value) && value.every((item) => typeof item === 'string'))
      keyed[name] = { texts: value.length };
    else keyed[name] = value;
  }
  return JSON.stringify(keyed);
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
    costs = { textVariables: textVariablesOf(query, operationName), byVariables: new Map() };
    // A document's operations are few (the parser's token limit bounds them).
    byOperation.set(name, costs);
  }
  const key = variablesKey(variables, costs.textVariables);
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
