/**
 * What a planned run gives a resolver besides its source and context: the field's `info`, one
 * object per field of the plan in one execution, and its arguments, coerced once per execution.
 */
import { getArgumentValues } from 'graphql/execution/values.js';
import type { FieldNode, FragmentDefinitionNode, GraphQLResolveInfo, GraphQLSchema } from 'graphql';
import type { Path } from 'graphql/jsutils/Path.js';
import { ObjectNode } from './answer.js';
import type { Container } from './answer.js';
import type { Plan, PlanField } from './plan.js';

/** What one execution of a plan runs with. */
export interface InfoOptions {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
  rootValue: unknown;
  variables: Record<string, unknown>;
}

/** The object whose fields a run is resolving or completing (whose path `info.path` gives). */
export interface Cursor {
  readonly current: ObjectNode | undefined;
}

/** The response path of `node` as graphql-js builds it (typename on field keys, none on list indices). */
function pathOf(node: Container | undefined): Path | undefined {
  if (!node?.parent) return undefined;
  return {
    prev: pathOf(node.parent),
    key: node.key,
    typename: node.parent instanceof ObjectNode ? node.parent.selection.type.name : undefined,
  };
}

/**
 * The `info` of one field of the plan in one execution: what graphql-js gives a resolver, the
 * same object for every object the field is resolved on. `path` is the path of the object being
 * resolved when it is read (a resolver that keeps `info` must read it at once).
 */
export class FieldInfo implements GraphQLResolveInfo {
  readonly fieldName: string;
  readonly fieldNodes: GraphQLResolveInfo['fieldNodes'];
  readonly returnType: GraphQLResolveInfo['returnType'];
  readonly parentType: GraphQLResolveInfo['parentType'];
  readonly schema: GraphQLSchema;
  readonly fragments: GraphQLResolveInfo['fragments'];
  readonly rootValue: unknown;
  readonly operation: GraphQLResolveInfo['operation'];
  readonly variableValues: GraphQLResolveInfo['variableValues'];

  constructor(
    private readonly run: Cursor,
    private readonly field: PlanField,
    options: InfoOptions,
    plan: Plan,
  ) {
    this.fieldName = field.definition.name;
    this.fieldNodes = field.nodes;
    this.returnType = field.definition.type;
    this.parentType = field.parentType;
    this.schema = options.schema;
    this.fragments = options.fragments;
    this.rootValue = options.rootValue;
    this.operation = plan.operation;
    this.variableValues = options.variables;
  }

  get path(): Path {
    return { prev: pathOf(this.run.current), key: this.field.responseKey, typename: this.field.parentType.name };
  }
}

/** A field's arguments as graphql-js coerces them (for a field whose arguments use variables). */
export function argumentValues(
  field: PlanField,
  variables: Record<string, unknown>,
): Readonly<Record<string, unknown>> {
  return getArgumentValues(field.definition, field.nodes[0] as FieldNode, variables);
}
