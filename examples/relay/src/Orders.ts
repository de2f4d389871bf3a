/**
 * The Relay example's operations: relay-compiler (`npm run relay`) reads these tags and writes
 * src/__generated__ and persisted_queries.json. An app with babel-plugin-relay imports the
 * artifacts through the tags; without Babel, import the generated modules themselves.
 */
import { graphql } from 'relay-runtime';

export const ordersQuery = graphql`
  query OrdersQuery($userId: ID!) {
    user(userId: $userId) {
      name
      ...Orders_user
    }
  }
`;

/** Alice's orders as a Relay connection, paged forward by `OrdersPaginationQuery`. */
export const ordersFragment = graphql`
  fragment Orders_user on User
  @refetchable(queryName: "OrdersPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 10 }, cursor: { type: "String" }) {
    orders(first: $count, after: $cursor) @connection(key: "Orders_orders") {
      edges {
        node {
          orderId
          status
        }
      }
    }
  }
`;

export const placeOrderMutation = graphql`
  mutation OrdersPlaceOrderMutation($input: PlaceOrderInput!) {
    placeOrder(input: $input) {
      order {
        orderId
        status
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`;

export const orderEventsSubscription = graphql`
  subscription OrdersEventsSubscription {
    orderEvents {
      type
      order {
        orderId
        status
      }
    }
  }
`;
