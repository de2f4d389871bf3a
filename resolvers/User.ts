import type { UserResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';

export const User: UserResolvers = {
  id: (user) => globalIdOf(user),
  orders: async (user, { status, ...args }, { loaders }) => {
    const page = await loaders.ordersPages.load({ userId: user.userId, status: status ?? null, args });
    return { ...page, totalCount: status ? null : user.orderCount };
  },
};
