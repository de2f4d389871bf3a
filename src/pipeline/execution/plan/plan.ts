/**
 * A plan: one operation of a document compiled against the schema, once, into what every
 * execution of it walks. For each object type a selection reaches, the fields graphql-js would
 * collect (graphql-js's own CollectFields: fragments, type conditions and @skip/@include applied,
 * in its key order), each with its definition, its response key, its arguments when
 * they are literals, and how its value completes (a leaf's serializer, a list, an object's
 * selection, or one selection per possible type of an interface or union).
 *
 * A plan depends on the variables only through @skip/@include: it is compiled for the values
 * of the variables those directives read (`conditionsOf`), and shared by every execution with the
 * same ones.
 */
import {
  getNamedType,
  isAbstractType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  TypeNameMetaFieldDef,
  visit,
} from 'graphql';
import type {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLAbstractType,
  GraphQLField,
  GraphQLLeafType,
  GraphQLObjectType,
  GraphQLOutputType,
  GraphQLSchema,
  OperationDefinitionNode,
  ValueNode,
} from 'graphql';
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js';
import { getFieldDef } from 'graphql/execution/execute.js';
import { getArgumentValues } from 'graphql/execution/values.js';

/** How a field's value completes (graphql-js's completeValue, decided once per field). */
export type Completion =
  | { readonly kind: 'leaf'; readonly nonNull: boolean; readonly type: GraphQLLeafType }
  | { readonly kind: 'list'; readonly nonNull: boolean; readonly of: Completion }
  | {
      readonly kind: 'object';
      readonly nonNull: boolean;
      readonly type: GraphQLObjectType;
      readonly selection: Selection;
    }
  | {
      readonly kind: 'abstract';
      readonly nonNull: boolean;
      readonly type: GraphQLAbstractType;
      readonly selections: ReadonlyMap<string, Selection>;
    };

export interface PlanField {
  /** Position among the plan's fields: per-execution state (arguments, infos) is kept by it. */
  readonly id: number;
  readonly responseKey: string;
  readonly fieldName: string;
  readonly nodes: readonly FieldNode[];
  readonly parentType: GraphQLObjectType;
  readonly definition: GraphQLField<unknown, unknown>;
  /** `__typename`: the parent's type name, no resolver. */
  readonly typename: boolean;
  /** The arguments, when no variable is in them (computed once); undefined: per execution. */
  readonly args: Readonly<Record<string, unknown>> | undefined;
  readonly completion: Completion;
}

export interface Selection {
  readonly type: GraphQLObjectType;
  readonly fields: readonly PlanField[];
  /**
   * A new object of the answer for this selection: every response key present, `null`, in the
   * selection's order (answer.ts).
   */
  readonly blank: () => Record<string, unknown>;
}

/**
 * A function returning a fresh object with `keys` (in their order) set to `null`, written as one
 * object literal: every object of one selection gets the same shape from its own creation site,
 * and filling it in stores to properties it already has. Adding the keys one by one with
 * computed names, to objects of every selection through one site, left V8 only its slow
 * generic (megamorphic) stores, with a shape transition per key.
 */
export function blankObject(keys: readonly string[]): () => Record<string, unknown> {
  // A computed key for `__proto__`: in a literal, `"__proto__": v` would set the prototype.
  const properties = keys.map((key) => {
    const name = JSON.stringify(key);
    return key === '__proto__' ? `[${name}]: null` : `${name}: null`;
  });
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- keys are JSON string literals; see above
  return new Function(`return { ${properties.join(', ')} };`) as () => Record<string, unknown>;
}

export interface Plan {
  readonly operation: OperationDefinitionNode;
  readonly root: Selection;
  /** How many fields the plan holds (for per-execution arrays, and its size in the cache). */
  readonly fieldCount: number;
}

/** A plan grows with the selections it expands (fragments spread under many aliases): past this, graphql-js runs it. */
export const MAX_PLAN_FIELDS = 20_000;

export class PlanTooLargeError extends Error {
  override name = 'PlanTooLargeError';
}

const NO_ARGS: Readonly<Record<string, unknown>> = Object.freeze({});

const hasVariable = (value: ValueNode): boolean => {
  switch (value.kind) {
    case Kind.VARIABLE:
      return true;
    case Kind.LIST:
      return value.values.some(hasVariable);
    case Kind.OBJECT:
      return value.fields.some((field) => hasVariable(field.value));
    default:
      return false;
  }
};

/**
 * The variables @skip and @include read anywhere in `document`: a plan is compiled for their
 * values (the only way variables change which fields are collected, and in which order).
 */
export function conditionVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Directive(directive) {
      if (directive.name.value !== 'skip' && directive.name.value !== 'include') return;
      for (const argument of directive.arguments ?? []) {
        if (argument.value.kind === Kind.VARIABLE) names.add(argument.value.name.value);
      }
    },
  });
  return [...names];
}

/** The values of the condition variables, as a key: plans differ exactly where this does. */
export const conditionsOf = (names: readonly string[], variables: Readonly<Record<string, unknown>>): string =>
  names.map((name) => (variables[name] === true ? '1' : variables[name] === false ? '0' : '-')).join('');

/**
 * Compiles `operation` of `document` for the condition values in `variables` (coerced).
 * Throws PlanTooLargeError past MAX_PLAN_FIELDS fields.
 */
export function compilePlan(
  schema: GraphQLSchema,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  operation: OperationDefinitionNode,
  rootType: GraphQLObjectType,
  variables: Readonly<Record<string, unknown>>,
): Plan {
  let count = 0;

  const field = (type: GraphQLObjectType, responseKey: string, nodes: readonly FieldNode[]): PlanField | undefined => {
    const first = nodes[0] as FieldNode;
    const definition = getFieldDef(schema, type, first) as GraphQLField<unknown, unknown> | undefined;
    if (!definition) return undefined; // graphql-js leaves a field the type does not have out
    if ((count += 1) > MAX_PLAN_FIELDS) throw new PlanTooLargeError(`more than ${MAX_PLAN_FIELDS} fields`);
    const literalArgs = !(first.arguments ?? []).some((argument) => hasVariable(argument.value));
    return {
      id: count - 1,
      responseKey,
      fieldName: first.name.value,
      nodes,
      parentType: type,
      definition,
      typename: definition === TypeNameMetaFieldDef,
      args:
        definition.args.length === 0
          ? NO_ARGS
          : literalArgs
            ? Object.freeze(getArgumentValues(definition, first, {}))
            : undefined,
      completion: completion(definition.type, nodes),
    };
  };

  const selection = (type: GraphQLObjectType, collected: Map<string, readonly FieldNode[]>): Selection => {
    const fields: PlanField[] = [];
    for (const [responseKey, nodes] of collected) {
      const compiled = field(type, responseKey, nodes);
      if (compiled) fields.push(compiled);
    }
    return { type, fields, blank: blankObject(fields.map((compiled) => compiled.responseKey)) };
  };

  const subselection = (type: GraphQLObjectType, nodes: readonly FieldNode[]): Selection =>
    selection(type, collectSubfields(schema, fragments, variables, type, nodes));

  const completion = (type: GraphQLOutputType, nodes: readonly FieldNode[]): Completion => {
    const nonNull = isNonNullType(type);
    const inner = nonNull ? type.ofType : type;
    if (isListType(inner)) return { kind: 'list', nonNull, of: completion(inner.ofType, nodes) };
    if (isLeafType(inner)) return { kind: 'leaf', nonNull, type: inner };
    if (isObjectType(inner)) return { kind: 'object', nonNull, type: inner, selection: subselection(inner, nodes) };
    if (isAbstractType(inner)) {
      const selections = new Map<string, Selection>();
      for (const possible of schema.getPossibleTypes(inner))
        selections.set(possible.name, subselection(possible, nodes));
      return { kind: 'abstract', nonNull, type: inner, selections };
    }
    throw new Error(`no completion for ${String(getNamedType(inner))}`);
  };

  const root = selection(rootType, collectFields(schema, fragments, variables, rootType, operation.selectionSet));
  return { operation, root, fieldCount: count };
}
