/**
 * What a selection set asks of one object type, as the GraphQL spec's CollectFields defines it:
 * fields through inline fragments and fragment spreads whose type condition applies, minus
 * anything `@skip(if: true)` or `@include(if: false)` removes (literals or variables), grouped
 * by response key. Only graphql-js's public API is used, so the lookahead and the operation
 * meter read a document the same way under any executor.
 */
import { getDirectiveValues, GraphQLIncludeDirective, GraphQLSkipDirective, isAbstractType, Kind } from 'graphql';
import type {
  FieldNode,
  FragmentDefinitionNode,
  FragmentSpreadNode,
  GraphQLObjectType,
  GraphQLSchema,
  InlineFragmentNode,
  SelectionSetNode,
} from 'graphql';

type Variables = Readonly<Record<string, unknown>> | null | undefined;

/** False when `@skip(if: true)` or `@include(if: false)` removes `node` (the spec's rule). */
export function isIncluded(node: FieldNode | FragmentSpreadNode | InlineFragmentNode, variables: Variables): boolean {
  if (!node.directives?.length) return true;
  const vars = (variables ?? {}) as Record<string, unknown>;
  if (getDirectiveValues(GraphQLSkipDirective, node, vars)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, vars)?.if !== false;
}

/** Whether a fragment's type condition applies to an object of `type` (no condition: always). */
function applies(schema: GraphQLSchema, condition: string | undefined, type: GraphQLObjectType): boolean {
  if (condition === undefined || condition === type.name) return true;
  const conditionType = schema.getType(condition);
  return conditionType !== undefined && isAbstractType(conditionType) && schema.isSubType(conditionType, type);
}

export interface CollectOptions {
  schema: GraphQLSchema;
  fragments: Readonly<Record<string, FragmentDefinitionNode | undefined>>;
  variables: Variables;
}

/**
 * The fields `selectionSets` select on an object of `type`, by response key (alias or name),
 * in document order. Each fragment is entered once per call, as the spec says.
 */
export function collectFields(
  selectionSets: readonly (SelectionSetNode | undefined)[],
  type: GraphQLObjectType,
  { schema, fragments, variables }: CollectOptions,
): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  const visited = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined): void => {
    for (const selection of selectionSet?.selections ?? []) {
      if (!isIncluded(selection, variables)) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const group = fields.get(key);
        if (group) group.push(selection);
        else fields.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(schema, selection.typeCondition?.name.value, type)) visit(selection.selectionSet);
      } else {
        const name = selection.name.value;
        const fragment = fragments[name];
        if (visited.has(name) || !fragment) continue;
        visited.add(name);
        if (applies(schema, fragment.typeCondition.name.value, type)) visit(fragment.selectionSet);
      }
    }
  };
  for (const selectionSet of selectionSets) visit(selectionSet);
  return fields;
}
