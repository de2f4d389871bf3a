import { BadUserInputError } from '../src/errors.js';
import type { ResolversParentTypes, SubscriptionResolvers } from '../src/generated/resolvers-types.js';
import { assertId } from '../src/table/keys.js';

const asEvent = (event: unknown) => event as ResolversParentTypes['OrderEvent'];

export const Subscription: SubscriptionResolvers = {
  orderUpdated: {
    subscribe: async (_, { orderId }, { access, events, resumeAfter }) => {
      // The same rule as order(orderId): another customer's order reads as missing.
      const order = await access.order(assertId(orderId, 'orderId'));
      if (!order) throw new BadUserInputError(`No order with orderId "${orderId}"`, 'orderId');
      return events.subscribe((event) => event.order.orderId === order.orderId, resumeAfter);
    },
    resolve: asEvent,
  },
  orderEvents: {
    subscribe: (_, { userId }, { access, events, resumeAfter }) => {
      const viewer = access.requireViewer();
      if (userId == null && viewer.role === 'admin') return events.subscribe(() => true, resumeAfter);
      const watched = userId == null ? viewer.userId : assertId(userId, 'userId');
      access.requireSelfOrAdmin(watched, 'watch orders');
      return events.subscribe((event) => event.order.userId === watched, resumeAfter);
    },
    resolve: asEvent,
  },
};
