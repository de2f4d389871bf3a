import type { UserResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';
import { reviewIdOf } from '../src/table/entities/review.js';
import { assertId } from '../src/table/keys.js';

export const User: UserResolvers = {
  id: (user) => globalIdOf(user),
  orders: async (user, { status, placedAfter, placedBefore, ...args }, { loaders, data }) => {
    const window = { placedAfter, placedBefore };
    const page = await loaders.ordersPages.load({ userId: user.userId, status: status ?? null, window, args });
    if (placedAfter != null || placedBefore != null) return { ...page, totalCount: null };
    if (!status) return { ...page, totalCount: user.orderCount };
    // Counted lazily: only a query that selects totalCount needs the counters' migration.
    return {
      ...page,
      totalCount: () => {
        data.schema?.assertMigrated('User.orders(status:).totalCount');
        return user.statusCounts?.[status] ?? null;
      },
    };
  },
  // A user is only ever shown to themselves or an admin: their review is theirs to see.
  review: async (user, { productId }, { loaders }) => {
    const review = await loaders.review(reviewIdOf(assertId(productId, 'productId'), user.userId));
    return review?.productId === productId && review.authorId === user.userId ? review : null;
  },
};
