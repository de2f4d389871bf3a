/**
 * A cost limit that knows every list: a list field's selection costs as many times as the list
 * holds. A connection's page (`first`/`last`, or the default page size) multiplies its
 * `edges`/`nodes`, `nodes(ids:)` multiplies by its ids, and an order's `items` by the lines an
 * order typically holds (TYPICAL_ORDER_LINES), not the most it may. Text fields weigh what their
 * longest value can weigh (INPUT_LIMITS), a unit for every CHARS_PER_UNIT characters; `__typename`
 * weighs 1 like any field. The estimate is the fast first refusal, made
 * before anything runs; the operation meter (meter.ts) is the guarantee, holding what the data
 * turns out to hold to its budgets while the answer is built (docs/security.md has the figures).
 * graphql-armor's own cost limit counts fields without list sizes, so this one
 * (graphql-query-complexity, run after variables are known) replaces it.
 */
import {
  getNamedType,
  getNullableType,
  getOperationAST,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
} from 'graphql';
import type { DocumentNode, GraphQLField, GraphQLSchema, TypeNode } from 'graphql';
import { getComplexity, simpleEstimator } from 'graphql-query-complexity';
import type { ComplexityEstimator } from 'graphql-query-complexity';
import { DEFAULT_PAGE_SIZE, INPUT_LIMITS, MAX_CATEGORIES, MAX_PAGE_SIZE, MAX_USER_ERRORS } from '../table/limits.js';

/**
 * Lines an order typically holds: counting every order at the most it may hold would refuse
 * ordinary pages of orders, and the meter holds a page of larger orders to its budgets anyway.
 */
export const TYPICAL_ORDER_LINES = 5;

/** Most elements a list field returns, by `Type.field`; a list named nowhere counts as `UNKNOWN_LIST_LENGTH`. */
export const LIST_BOUNDS: Readonly<Record<string, number>> = {
  // What an order typically holds, not the most it may (MAX_ORDER_LINES): the meter bounds what
  // the data turns out to hold (docs/security.md states the figure).
  'Order.items': TYPICAL_ORDER_LINES,
  // A path inside an input: ["items", "2", "quantity"] at most.
  'UserError.field': 3,
  // Every category may be listed, and each one's `products` is a Query of its own.
  'Query.categories': MAX_CATEGORIES,
};

/** A list with no known bound: counted as a full page rather than once. */
const UNKNOWN_LIST_LENGTH = MAX_PAGE_SIZE;

/** The characters of text one cost unit stands for, as a unit of any other field stands for a short value. */
const CHARS_PER_UNIT = 100;
const textWeight = (maxLength: number) => Math.ceil(maxLength / CHARS_PER_UNIT);

/** What one field weighs besides its selection: text fields by their longest value. */
export const FIELD_WEIGHTS: Readonly<Record<string, number>> = {
  'Product.description': textWeight(INPUT_LIMITS.descriptionLength),
  'Product.name': textWeight(INPUT_LIMITS.productNameLength),
  // An order line keeps the product's name as it was when the order was placed.
  'OrderItem.name': textWeight(INPUT_LIMITS.productNameLength),
};

const pageSizeOf = (args: Record<string, unknown>): number => {
  const size =
    typeof args.first === 'number' ? args.first : typeof args.last === 'number' ? args.last : DEFAULT_PAGE_SIZE;
  // Sizes over the cap are refused by the connection itself, with a clearer message.
  return Math.min(Math.max(size, 1), MAX_PAGE_SIZE);
};

/**
 * The estimator, pure: what the field `owner.field` costs given its arguments and the cost of
 * its selection. A connection multiplies its whole selection by the page size (its `edges`
 * and `nodes` are that page: they do not multiply again), `nodes(ids:)` by its ids, any other
 * list by its bound.
 */
export function fieldCost(
  owner: string,
  field: Pick<GraphQLField<unknown, unknown>, 'name' | 'type'>,
  args: Record<string, unknown>,
  childComplexity: number,
): number {
  // Introspection reads the schema in memory, not the table; whether it is allowed at all is
  // the introspection setting's business.
  // `__typename` is an entry of the answer like any other field.
  if (field.name === '__typename') return 1;
  if (owner.startsWith('__') || field.name.startsWith('__')) return 0;
  const key = `${owner}.${field.name}`;
  const weight = FIELD_WEIGHTS[key] ?? 1;
  const named = getNamedType(field.type).name;
  if (named.endsWith('Connection')) return weight + childComplexity * pageSizeOf(args);
  if (!isListType(getNullableType(field.type)) || owner.endsWith('Connection')) return weight + childComplexity;
  const length =
    field.name === 'nodes' && Array.isArray(args.ids)
      ? Math.max(args.ids.length, 1)
      : named === 'UserError'
        ? MAX_USER_ERRORS
        : (LIST_BOUNDS[key] ?? UNKNOWN_LIST_LENGTH);
  return weight + childComplexity * length;
}

/** Which type declares each field object (the estimator is handed the field, not its parent). */
function fieldOwners(schema: GraphQLSchema): Map<unknown, string> {
  const owners = new Map<unknown, string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    for (const field of Object.values(type.getFields())) owners.set(field, type.name);
  }
  return owners;
}

const ownersBySchema = new WeakMap<GraphQLSchema, Map<unknown, string>>();

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
  let owners = ownersBySchema.get(schema);
  if (!owners) ownersBySchema.set(schema, (owners = fieldOwners(schema)));
  const known = owners;
  const estimator: ComplexityEstimator = ({ field, args, childComplexity }) =>
    fieldCost(known.get(field) ?? '', field, args, childComplexity);
  return getComplexity({
    schema,
    query,
    variables,
    operationName,
    estimators: [estimator, simpleEstimator({ defaultComplexity: 1 })],
  });
}
