import type { UserResolvers } from '../src/generated/resolvers-types.js';
import { globalIdOf } from '../src/graphql/globalId.js';
import type { OrderConnectionModel } from '../src/graphql/graphqlModels.js';
import { readField } from '../src/graphql/reads.js';
import { nodeSource, ordersPageSource } from '../src/graphql/sources.js';
import type { UserOrdersArgs, UserReviewArgs } from '../src/generated/resolvers-types.js';
import { reviewIdOf } from '../src/table/entities/review.js';
import { assertId } from '../src/table/keys.js';
import type { ReviewModel, UserModel } from '../src/table/models.js';

export const User: UserResolvers = {
  id: (user) => globalIdOf(user),
  orders: readField({
    source: ordersPageSource,
    key: (user: UserModel, { status, placedAfter, placedBefore, ...args }: UserOrdersArgs) => ({
      userId: user.userId,
      status: status ?? null,
      window: { placedAfter, placedBefore },
      args,
    }),
    value: (page, { status, window }, user, _args, { data }): OrderConnectionModel => {
      if (window?.placedAfter != null || window?.placedBefore != null) return { ...page, totalCount: null };
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
  }),
  // A user is only ever shown to themselves or an admin: their review is theirs to see.
  review: readField({
    source: nodeSource,
    key: (user: UserModel, { productId }: UserReviewArgs) => ({
      kind: 'Review' as const,
      id: reviewIdOf(assertId(productId, 'productId'), user.userId),
    }),
    value: (found, _key, user, { productId }): ReviewModel | null => {
      const review = found as ReviewModel | null;
      return review?.productId === productId && review.authorId === user.userId ? review : null;
    },
  }),
};
