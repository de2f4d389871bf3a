/**
 * What the operation meter (meter.ts) counts for one object before the executor builds it: the
 * shape of a field's selection on an object type (its entries, the bytes known from the document,
 * the leaf properties whose values are measured), collected once per field and type. An
 * operation's shapes depend on its document, the schema and the values of the variables that
 * @skip and @include read, nothing else, so they are kept across executions under that key.
 */
import { getNamedType, isLeafType, isObjectType, Kind, visit } from 'graphql';
import type {
  DirectiveNode,
  FieldNode,
  GraphQLCompositeType,
  GraphQLObjectType,
  GraphQLResolveInfo,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { collectFields } from '../../graphql/selections.js';
import type { CollectOptions } from '../../graphql/selections.js';

/** What one selection costs on one object: entries, bytes known from the document, fields read from the object. */
export interface Shape {
  entries: number;
  fixedBytes: number;
  /** Leaf fields read as properties of the object (no resolver): their values are measured. */
  properties: string[];
}

/** The shape of an interface or union that no type implements: nothing is counted. */
export const NO_TYPE: Shape = { entries: 0, fixedBytes: 0, properties: [] };

/** A leaf whose value a resolver computes (an id, a date): about this many bytes. */
const COMPUTED_LEAF_BYTES = 16;

/** Bytes of a leaf value in JSON, approximately (strings by their length: a cheap lower bound). */
export function leafBytes(value: unknown): number {
  if (value === null || value === undefined) return 4;
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number' || typeof value === 'bigint') return 8;
  if (typeof value === 'boolean') return 5;
  if (Array.isArray(value)) {
    let bytes = 2;
    for (const item of value as unknown[]) bytes += leafBytes(item) + 1;
    return bytes;
  }
  return COMPUTED_LEAF_BYTES;
}

/** Shapes of one operation: by the field (first node of its group, or the operation) and the object type. */
export type Shapes = Map<object, Map<string, Shape>>;

/** At most this many sets of condition values per operation have their shapes kept (each is a few fields). */
const KEPT_CONDITION_SETS = 16;

/** One operation's kept shapes: the variables its @skip/@include read, and the shapes per set of their values. */
interface KeptShapes {
  conditions: readonly string[];
  byValues: Map<string, Shapes>;
}

/**
 * The shapes of an operation depend on its document, the schema and the values of the variables
 * that @skip and @include read, nothing else: they are kept across executions, by schema, by
 * operation (an entry goes with its document) and by those values, instead of being collected
 * again by every execution.
 */
const keptShapes = new WeakMap<GraphQLSchema, WeakMap<OperationDefinitionNode, KeptShapes>>();

/** The variables that @skip and @include read in `operation` or in the fragments it may spread. */
function conditionVariables(operation: OperationDefinitionNode, fragments: CollectOptions['fragments']): string[] {
  const names = new Set<string>();
  const visitor = {
    Directive(directive: DirectiveNode) {
      if (directive.name.value !== 'skip' && directive.name.value !== 'include') return;
      for (const argument of directive.arguments ?? []) {
        if (argument.value.kind === Kind.VARIABLE) names.add(argument.value.name.value);
      }
    },
  };
  visit(operation, visitor);
  for (const fragment of Object.values(fragments)) if (fragment) visit(fragment, visitor);
  return [...names];
}

/**
 * The kept shapes of `operation` for these variables, or undefined where they are not kept (a
 * condition's value that is not a boolean, past KEPT_CONDITION_SETS sets of values).
 */
export function keptShapesOf(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: () => CollectOptions['fragments'],
  variables: Readonly<Record<string, unknown>> | null | undefined,
): Shapes | undefined {
  let bySchema = keptShapes.get(schema);
  if (!bySchema) keptShapes.set(schema, (bySchema = new WeakMap()));
  let kept = bySchema.get(operation);
  if (!kept)
    bySchema.set(operation, (kept = { conditions: conditionVariables(operation, fragments()), byValues: new Map() }));
  let values = '';
  for (const name of kept.conditions) {
    const value = variables?.[name];
    if (typeof value !== 'boolean') return undefined;
    values += value ? '1' : '0';
  }
  let shapes = kept.byValues.get(values);
  if (!shapes) {
    if (kept.byValues.size >= KEPT_CONDITION_SETS) return undefined;
    kept.byValues.set(values, (shapes = new Map<object, Map<string, Shape>>()));
  }
  return shapes;
}

/**
 * The shape of `selectionSets` on one object of `type`, kept in `shapes` under `key` (the field's
 * first node, or the operation) and the type's name.
 */
export function collectShape(
  shapes: Shapes,
  key: object,
  selectionSets: readonly (SelectionSetNode | undefined)[],
  type: GraphQLObjectType,
  options: CollectOptions,
): Shape {
  let byType = shapes.get(key);
  if (!byType) shapes.set(key, (byType = new Map<string, Shape>()));
  let shape = byType.get(type.name);
  if (shape) return shape;
  shape = { entries: 0, fixedBytes: 2, properties: [] };
  const fields = type.getFields();
  for (const [responseKey, nodes] of collectFields(selectionSets, type, options)) {
    shape.entries += 1;
    // "key": and a comma.
    shape.fixedBytes += responseKey.length + 4;
    const name = (nodes[0] as FieldNode).name.value;
    if (name === '__typename') {
      shape.fixedBytes += type.name.length + 2;
      continue;
    }
    const field = fields[name];
    if (!field || !isLeafType(getNamedType(field.type))) continue; // objects count themselves
    if (field.resolve) shape.fixedBytes += COMPUTED_LEAF_BYTES;
    else shape.properties.push(name);
  }
  byType.set(type.name, shape);
  return shape;
}

/**
 * The shape of one object of `named`, returned by the field of `info`; for an interface or a
 * union, the largest among the types it may be (an upper bound, without asking the executor
 * which type it resolves to). Kept under the field and `named`: the look-up of every other
 * object the field returns in this operation.
 */
export function fieldShape(shapes: Shapes, named: GraphQLCompositeType, info: GraphQLResolveInfo): Shape {
  const key = info.fieldNodes[0] as FieldNode;
  let byType = shapes.get(key);
  if (!byType) shapes.set(key, (byType = new Map<string, Shape>()));
  const known = byType.get(named.name);
  if (known) return known;
  const selectionSets = info.fieldNodes.map((node) => node.selectionSet);
  const options = { schema: info.schema, fragments: info.fragments, variables: info.variableValues };
  if (isObjectType(named)) return collectShape(shapes, key, selectionSets, named, options);
  let widest: Shape | undefined;
  for (const candidate of info.schema.getPossibleTypes(named)) {
    const shape = collectShape(shapes, key, selectionSets, candidate, options);
    if (!widest || shape.entries + shape.properties.length > widest.entries + widest.properties.length) widest = shape;
  }
  widest ??= NO_TYPE;
  byType.set(named.name, widest);
  return widest;
}
