import { BadUserInputError } from '../src/errors.js';
import type { SubscriptionResolvers } from '../src/generated/resolvers-types.js';
import { eventsAbout } from '../src/graphql/eventFanOut.js';
import type { OrderEventModel, ReviewEventModel } from '../src/graphql/graphqlModels.js';
import { TOPICS } from '../src/table/entities/topics.js';
import { assertId } from '../src/table/keys.js';

const asOrderEvent = (event: unknown) => event as OrderEventModel;
const isOrderEvent = eventsAbout('Order');
const isReviewEvent = eventsAbout('Review');

export const Subscription: SubscriptionResolvers = {
  orderUpdated: {
    subscribe: async (_, { orderId }, { access, events, resume }) => {
      // The same rule as order(orderId): another customer's order reads as missing.
      const order = await access.order(assertId(orderId, 'orderId'));
      if (!order) throw new BadUserInputError(`No order with orderId "${orderId}"`, 'orderId');
      return events.open({ topic: TOPICS.order.of(order.orderId), accept: isOrderEvent, resume });
    },
    resolve: asOrderEvent,
  },
  orderEvents: {
    subscribe: (_, { userId }, { access, events, resume }) => {
      const viewer = access.requireViewer();
      if (userId == null && viewer.role === 'admin') {
        return events.open({ topic: TOPICS.shopOrders.of(), accept: isOrderEvent, resume });
      }
      const watched = userId == null ? viewer.userId : assertId(userId, 'userId');
      access.requireSelfOrAdmin(watched, 'watch orders');
      return events.open({ topic: TOPICS.userOrders.of(watched), accept: isOrderEvent, resume });
    },
    resolve: asOrderEvent,
  },
  reviewAdded: {
    subscribe: async (_, { productId }, { access, events, resume }) => {
      // As product(productId): a product that does not exist is refused, not watched forever.
      const product = await access.product(assertId(productId, 'productId'));
      if (!product) throw new BadUserInputError(`No product with productId "${productId}"`, 'productId');
      const topic = TOPICS.productReviews.of(product.productId);
      return events.open({
        topic,
        accept: (event) => isReviewEvent(event) && event.type === 'REVIEW_ADDED',
        resume,
      });
    },
    resolve: (event: unknown) => (event as ReviewEventModel).node,
  },
};
