import type { Access } from '../src/auth/access.js';
import { BadUserInputError } from '../src/errors.js';
import type { QueryResolvers } from '../src/generated/resolvers-types.js';
import { fromGlobalId } from '../src/graphql/globalId.js';
import { prefetchProductPage, prefetchUserOrders } from '../src/graphql/lookahead.js';
import { productListing } from '../src/graphql/productListing.js';
import { assertId, normalizeCategory, normalizeEmail } from '../src/table/keys.js';

/** `nodes(ids:)` reads at most this many ids: one BatchGetItem's worth. */
export const MAX_NODE_IDS = 100;

export const Query: QueryResolvers = {
  viewer: (_, __, { access, loaders }, info) => {
    if (!access.viewer) return null;
    prefetchUserOrders(info, loaders, access.viewer.userId);
    return access.user(access.viewer.userId);
  },
  node: (_, { id }, { access }) => loadNode(access, id, 'id'),
  // Async, like `products`: a non-null field that throws synchronously makes graphql-js abandon
  // its siblings' pending results, whose rejections then go unhandled.
  nodes: async (_, { ids }, { access }) => {
    if (ids.length > MAX_NODE_IDS) throw new BadUserInputError(`ids may hold at most ${MAX_NODE_IDS} ids`, 'ids');
    // Every id decoded before any is loaded: a forged one refuses the field without a read
    // scheduled for the ids before it (a read nobody would wait for or count).
    const decoded = ids.map((id) => fromGlobalId(id, 'ids'));
    return Promise.all(decoded.map(({ type, id }) => access.node(type, id)));
  },
  user: (_, { userId }, { access, loaders }, info) => {
    const id = assertId(userId, 'userId');
    // Only for users the viewer may see: nobody else's orders are ever read.
    if (access.owns(id)) prefetchUserOrders(info, loaders, id);
    return access.user(id);
  },
  userByEmail: (_, { email }, { access }) => access.userByEmail(normalizeEmail(email)),
  order: (_, { orderId }, { access }) => access.order(assertId(orderId, 'orderId')),
  product: (_, { productId }, { access, loaders }, info) => {
    const id = assertId(productId, 'productId');
    prefetchProductPage(info, loaders, id);
    return access.product(id);
  },
  products: async (_, { category, ...args }, { loaders, data }, info) =>
    productListing(category == null ? null : normalizeCategory(category), args, { loaders, schema: data.schema }, info),
  orders: async (_, { status, placedAfter, placedBefore, ...args }, { access, data }) => {
    const window = { placedAfter, placedBefore };
    const page = await access.shopOrders({ status: status ?? null, window, args }, data.schema);
    return { ...page, totalCount: null };
  },
  categories: (_, __, { loaders, data }) => {
    data.schema?.assertMigrated('Query.categories');
    return loaders.categories.load('all');
  },
};

/** Decodes first (BAD_USER_INPUT for a forged id), then reads under the same rules as the typed look-ups. */
function loadNode(access: Access, globalId: string, argumentName: string) {
  const { type, id } = fromGlobalId(globalId, argumentName);
  return access.node(type, id);
}
