/**
 * Lookahead: a root field that names a user by id (`user(userId:)`, `viewer`) already knows
 * everything its `orders` connection needs. Starting that Query together with the user's read,
 * instead of after it, turns two sequential DynamoDB round trips into one level of latency
 * (same number of requests). The page goes into the request's ordersPages loader, where
 * User.orders finds it.
 *
 * Better still, the first page newest first without a status filter or a window comes with the
 * user's profile in one Query (the user's item collection, src/db/userCollection.ts): the first
 * such `orders` field is fused with the user's read, any other goes beside it.
 *
 * A field or fragment that `@skip`/`@include` removes (literal or variable) is not selected: it
 * starts no read, and is never the one fused.
 */
import { getArgumentValues } from 'graphql/execution/values.js';
import { getNamedType, isObjectType, Kind } from 'graphql';
import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import type { Loaders } from '../db/loaders.js';
import type { OrderStatus } from '../table/models.js';
import { isIncluded } from './selections.js';

/** The `orders` fields selected directly on the field being resolved (through fragments too). */
function ordersFields(
  selectionSet: SelectionSetNode | undefined,
  info: GraphQLResolveInfo,
  found: FieldNode[] = [],
): FieldNode[] {
  for (const selection of selectionSet?.selections ?? []) {
    if (!isIncluded(selection, info.variableValues)) continue;
    if (selection.kind === Kind.FIELD && selection.name.value === 'orders') found.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) ordersFields(selection.selectionSet, info, found);
    else if (selection.kind === Kind.FRAGMENT_SPREAD)
      ordersFields(info.fragments[selection.name.value]?.selectionSet, info, found);
  }
  return found;
}

/**
 * Starts every `orders` page selected under the current field for `userId`. Call it before
 * the user is loaded: the fused read stands in for that load. Failures are left to the
 * User.orders resolver, which reads the same loader entry and reports them there.
 */
export function prefetchUserOrders(info: GraphQLResolveInfo, loaders: Loaders, userId: string): void {
  const userType = getNamedType(info.returnType);
  if (!isObjectType(userType)) return;
  const ordersField = userType.getFields().orders;
  if (!ordersField) return;
  let fused = false;
  for (const fieldNode of info.fieldNodes) {
    for (const node of ordersFields(fieldNode.selectionSet, info)) {
      let args: Record<string, unknown>;
      try {
        args = getArgumentValues(ordersField, node, info.variableValues);
      } catch {
        continue; // invalid arguments: the resolver reports them
      }
      const { status, placedAfter, placedBefore, ...page } = args as {
        status?: OrderStatus | null;
        placedAfter?: string | null;
        placedBefore?: string | null;
      } & Record<string, number | string | null>;
      const window = { placedAfter, placedBefore };
      const plain = status == null && placedAfter == null && placedBefore == null;
      const fusedHere: boolean = !fused && plain && loaders.userWithFirstOrders(userId, page);
      fused ||= fusedHere;
      if (!fusedHere) {
        loaders.ordersPages.load({ userId, status: status ?? null, window, args: page }).catch(() => undefined);
      }
    }
  }
}

/** True when the field being resolved selects `name` directly (through fragments too): its read can start now. */
export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  const selects = (selectionSet: SelectionSetNode | undefined): boolean =>
    (selectionSet?.selections ?? []).some((selection) =>
      !isIncluded(selection, info.variableValues)
        ? false
        : selection.kind === Kind.FIELD
          ? selection.name.value === name
          : selection.kind === Kind.INLINE_FRAGMENT
            ? selects(selection.selectionSet)
            : selects(info.fragments[selection.name.value]?.selectionSet),
    );
  return info.fieldNodes.some((node) => selects(node.selectionSet));
}
