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
 * The same holds for a product looked up by id (`product(productId:)`): its rating is read in
 * the BatchGetItem of the product, and its first page of reviews newest first comes with the
 * product and its rating in one Query (the product's item collection, src/db/productPage.ts).
 *
 * A field or fragment that `@skip`/`@include` removes (literal or variable) is not selected: it
 * starts no read, and is never the one fused.
 */
import { getArgumentValues } from 'graphql/execution/values.js';
import { getNamedType, isObjectType, Kind } from 'graphql';
import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import type { Loaders } from '../db/loaders.js';
import type { GraphQLContext } from './context.js';
import { prefetch } from './reads.js';
import { nodeSource, reviewsPageSource } from './sources.js';
import type { ReviewOrder } from '../db/productPage.js';
import type { OrderStatus } from '../table/models.js';
import { isIncluded } from './selections.js';

/** The `name` fields selected directly on the field being resolved (through fragments too). */
function fieldsNamed(
  name: string,
  selectionSet: SelectionSetNode | undefined,
  info: GraphQLResolveInfo,
  found: FieldNode[] = [],
): FieldNode[] {
  for (const selection of selectionSet?.selections ?? []) {
    if (!isIncluded(selection, info.variableValues)) continue;
    if (selection.kind === Kind.FIELD && selection.name.value === name) found.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) fieldsNamed(name, selection.selectionSet, info, found);
    else if (selection.kind === Kind.FRAGMENT_SPREAD)
      fieldsNamed(name, info.fragments[selection.name.value]?.selectionSet, info, found);
  }
  return found;
}

/** Each `name` field selected on the field being resolved, with its arguments (one with invalid arguments is left to its resolver). */
function selected(info: GraphQLResolveInfo, name: string): { node: FieldNode; args: Record<string, unknown> }[] {
  const type = getNamedType(info.returnType);
  const definition = isObjectType(type) ? type.getFields()[name] : undefined;
  if (!definition) return [];
  return info.fieldNodes.flatMap((fieldNode) =>
    fieldsNamed(name, fieldNode.selectionSet, info).flatMap((node) => {
      try {
        return [{ node, args: getArgumentValues(definition, node, info.variableValues) }];
      } catch {
        return []; // invalid arguments: the resolver reports them
      }
    }),
  );
}

/**
 * Starts every `orders` page selected under the current field for `userId`. Call it before
 * the user is loaded: the fused read stands in for that load. Failures are left to the
 * User.orders resolver, which reads the same loader entry and reports them there.
 */
export function prefetchUserOrders(info: GraphQLResolveInfo, loaders: Loaders, userId: string): void {
  let fused = false;
  for (const { args } of selected(info, 'orders')) {
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

/**
 * Starts what a product page selects under the current field for `productId`: every `reviews`
 * page (the first newest-first one fused with the product's read), and the rating where
 * `rating` or a page's `totalCount` needs it, in the product's BatchGetItem when not fused.
 * Call it before the product is loaded (under the planned executor: while the product's key is
 * filed, so that they join its round).
 */
export function prefetchProductPage(info: GraphQLResolveInfo, context: GraphQLContext, productId: string): void {
  const { loaders } = context;
  let fused = false;
  let counted = false;
  for (const { node, args } of selected(info, 'reviews')) {
    const { orderBy, ...page } = args as { orderBy?: ReviewOrder | null } & Record<string, number | string | null>;
    const order = orderBy ?? 'NEWEST';
    const fusedHere: boolean = !fused && loaders.productWithFirstReviews(productId, order, page);
    fused ||= fusedHere;
    if (!fusedHere) prefetch(context, reviewsPageSource, { productId, order, args: page });
    counted ||= fieldsNamed('totalCount', node.selectionSet, info).length > 0;
  }
  if (!fused && (counted || selected(info, 'rating').length > 0)) {
    // Both read at once (in this tick, or in the planned executor's round): one BatchGetItem,
    // which the product's own read then waits for (or joins).
    prefetch(context, nodeSource, { kind: 'Product', id: productId });
    prefetch(context, nodeSource, { kind: 'ProductRating', id: productId });
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
