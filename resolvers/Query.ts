import { BadUserInputError } from '../src/errors.js';
import type { QueryProductsArgs, QueryResolvers } from '../src/generated/resolvers-types.js';
import { fromGlobalId } from '../src/graphql/globalId.js';
import type { OrderConnectionModel } from '../src/graphql/graphqlModels.js';
import { prefetchProductPage, prefetchUserOrders } from '../src/graphql/lookahead.js';
import { productListing } from '../src/graphql/productListing.js';
import { Known, readField } from '../src/graphql/reads.js';
import { categoriesSource, nodeSource, shopOrdersPageSource, userByEmailSource } from '../src/graphql/sources.js';
import type { NodeModel, OrderModel, ProductModel, UserModel } from '../src/table/models.js';
import { assertId, normalizeCategory, normalizeEmail } from '../src/table/keys.js';

/** `nodes(ids:)` reads at most this many ids: one BatchGetItem's worth. */
export const MAX_NODE_IDS = 100;

export const Query: QueryResolvers = {
  viewer: readField({
    source: nodeSource,
    key: (_, __, { access, loaders }, info) => {
      if (!access.viewer) return new Known(null);
      prefetchUserOrders(info, loaders, access.viewer.userId);
      return { kind: 'User' as const, id: access.viewer.userId };
    },
    value: (found) => found as UserModel | null,
  }),
  // Decoded first (BAD_USER_INPUT for a forged id), then read under the same rules as the typed look-ups.
  node: readField({
    source: nodeSource,
    key: (_, { id }: { id: string }) => {
      const { type, id: rawId } = fromGlobalId(id, 'id');
      return { kind: type, id: rawId };
    },
    value: (found) => found as NodeModel | null,
  }),
  nodes: readField({
    source: nodeSource,
    key: (_, { ids }: { ids: readonly string[] }) => {
      if (ids.length > MAX_NODE_IDS) throw new BadUserInputError(`ids may hold at most ${MAX_NODE_IDS} ids`, 'ids');
      // Every id decoded before any is loaded: a forged one refuses the field without a read
      // scheduled for the ids before it (a read nobody would wait for or count).
      return ids.map((id) => {
        const { type, id: rawId } = fromGlobalId(id, 'ids');
        return { kind: type, id: rawId };
      });
    },
    value: (found) => found as (NodeModel | null)[],
  }),
  user: readField({
    source: nodeSource,
    key: (_, { userId }: { userId: string }, { access, loaders }, info) => {
      const id = assertId(userId, 'userId');
      // Only for users the viewer may see: nobody else's orders are ever read.
      if (access.owns(id)) prefetchUserOrders(info, loaders, id);
      return { kind: 'User' as const, id };
    },
    value: (found) => found as UserModel | null,
  }),
  userByEmail: readField({
    source: userByEmailSource,
    key: (_, { email }: { email: string }) => normalizeEmail(email),
    value: (found) => found as UserModel | null,
  }),
  order: readField({
    source: nodeSource,
    key: (_, { orderId }: { orderId: string }) => ({ kind: 'Order' as const, id: assertId(orderId, 'orderId') }),
    value: (found) => found as OrderModel | null,
  }),
  product: readField({
    source: nodeSource,
    key: (_, { productId }: { productId: string }, context, info) => {
      const id = assertId(productId, 'productId');
      // Its rating and first reviews start now, the first page with the product in one Query.
      prefetchProductPage(info, context, id);
      return { kind: 'Product' as const, id };
    },
    value: (found) => found as ProductModel | null,
  }),
  products: productListing((_, { category }: QueryProductsArgs) => ({
    category: category == null ? null : normalizeCategory(category),
  })),
  orders: readField({
    source: shopOrdersPageSource,
    key: (_, { status, placedAfter, placedBefore, ...args }, { access, data }) => {
      access.mayListShopOrders(data.schema);
      return { status: status ?? null, window: { placedAfter, placedBefore }, args };
    },
    value: (page): OrderConnectionModel => ({ ...page, totalCount: null }),
  }),
  categories: readField({
    source: categoriesSource,
    key: (_, __, { data }) => {
      data.schema?.assertMigrated('Query.categories');
      return 'all' as const;
    },
  }),
};
