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
import { LRUCache } from 'lru-cache';
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
 * Costs already worked out: the cost is a pure function of the schema, the document, the
 * operation and the variables, and a repeated request (a cache hit above all) need not walk its
 * document again. The limit is still checked on every request.
 *
 * Only what can change the estimate is part of the key: the variables the operation declares
 * (graphql-js ignores any other, so a client's extra variables are never part of it), and of
 * those, the estimator reads numbers (`first`, `last`), list lengths (`ids`) and booleans
 * (@skip/@include), never the text of a `String` or `ID`. A string where the variable's type
 * takes a `String` or `ID` (any string coerces to either) is therefore keyed as "a string", at
 * any depth: a variable of that type, each element of a list of them, or a field of an input
 * object (a mutation's `input`). So the page of every user's orders, whatever the user, is worked
 * out once, and so is every order placed with the same number of lines and quantities, whatever
 * its idempotency key. A list keeps its length, and every other value is keyed as it is. A
 * variable holding something else than a string where a text goes is not remembered at all (it
 * may well not coerce; the estimate says so).
 *
 * What clients send picks the keys, so the costs remembered are one LRU per schema, over every
 * document, bounded by entries and by the characters of their keys (a key longer than
 * REMEMBERED_KEY_MAX_CHARS is not remembered): however many documents and variables clients
 * vary, it stays within REMEMBERED_COSTS_BYTES. A document's entries outlive it in the LRU
 * until they are the least recently used.
 */
export const REMEMBERED_COSTS = 10_000;
/** Estimated bytes of the remembered costs: two bytes a character of each key, and the entry around it. */
export const REMEMBERED_COSTS_BYTES = 4 * 2 ** 20;
export const REMEMBERED_KEY_MAX_CHARS = 4096;
const ENTRY_BYTES = 128;

/** How a value of one input type is keyed: texts as "a string", the rest as they are. */
type Keying = 'text' | 'kept' | { list: Keying } | { fields: Map<string, Keying> };

/** One document's part: its id in the keys, and each operation's declared variables with their keying. */
interface DocumentCosts {
  id: string;
  operations: Map<string, ReadonlyMap<string, Keying>>;
}

interface RememberedCosts {
  costs: LRUCache<string, number>;
  documents: WeakMap<object, DocumentCosts>;
}

const rememberedBySchema = new WeakMap<GraphQLSchema, RememberedCosts>();
let documentsSeen = 0;

function rememberedOf(schema: GraphQLSchema): RememberedCosts {
  let remembered = rememberedBySchema.get(schema);
  if (!remembered) {
    remembered = {
      costs: new LRUCache<string, number>({
        max: REMEMBERED_COSTS,
        maxSize: REMEMBERED_COSTS_BYTES,
        sizeCalculation: (_cost, key) => key.length * 2 + ENTRY_BYTES,
      }),
      documents: new WeakMap(),
    };
    rememberedBySchema.set(schema, remembered);
  }
  return remembered;
}

/** The costs remembered for `schema` now: entries and their estimated bytes (tests, the memory bench). */
export function rememberedCosts(schema: GraphQLSchema): { entries: number; bytes: number } {
  const { costs } = rememberedOf(schema);
  return { entries: costs.size, bytes: costs.calculatedSize };
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

/** The variables `operationName` declares, in their order, each with its keying. */
function declaredOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
): Map<string, Keying> {
  const operation = getOperationAST(document, operationName);
  const declared = new Map<string, Keying>();
  const inputs = new Map<GraphQLInputObjectType, Keying>();
  for (const definition of operation?.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type);
    declared.set(definition.variable.name.value, type && isInputType(type) ? keyingOf(type, inputs) : 'kept');
  }
  return declared;
}

/** The key of `variables` among the costs of one operation (see above), or undefined when they are not remembered. */
function variablesKey(variables: Record<string, unknown>, declared: ReadonlyMap<string, Keying>): string | undefined {
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
  // Declared variables only, in their declared order: an undeclared one changes nothing; a
  // declared one absent (undefined: left out of the JSON) and one sent as null stay apart.
  const keyed: unknown[] = [];
  for (const [name, keying] of declared) {
    const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
    keyed.push(value === undefined ? 0 : [keyOf(value, keying)]);
  }
  return remembered ? JSON.stringify(keyed) : undefined;
}

export function queryCost(
  schema: GraphQLSchema,
  query: Parameters<typeof getComplexity>[0]['query'],
  variables: Record<string, unknown>,
  operationName?: string,
): number {
  const { costs, documents } = rememberedOf(schema);
  let document = documents.get(query);
  if (!document) {
    document = { id: (documentsSeen++).toString(36), operations: new Map() };
    documents.set(query, document);
  }
  const name = operationName ?? '';
  let declared = document.operations.get(name);
  if (!declared) {
    declared = declaredOf(schema, query, operationName);
    // A document's operations are few (the parser's token limit bounds them).
    document.operations.set(name, declared);
  }
  const variablesPart = variablesKey(variables, declared);
  const key =
    variablesPart === undefined || variablesPart.length > REMEMBERED_KEY_MAX_CHARS
      ? undefined
      : `${document.id}\n${name}\n${variablesPart}`;
  if (key === undefined) return computeCost(schema, query, variables, operationName);
  const known = costs.get(key);
  if (known !== undefined) return known;
  const cost = computeCost(schema, query, variables, operationName);
  costs.set(key, cost);
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
