import type { OrderEventResolvers } from '../src/generated/resolvers-types.js';

/** An order's change event in the schema's terms: its node is the order, `previous` holds the status it left. */
export const OrderEvent: OrderEventResolvers = {
  order: (event) => event.node,
  previousStatus: (event) => event.previous?.status ?? null,
};
