/**
 * The measured operations: one GraphQL document each, a deterministic stream of variables
 * (every system gets the same sequence), and what the query shape allows at best.
 *
 * All three systems receive the very same HTTP body `{ operationName, query, variables }`:
 * the GraphQL servers execute the document, the raw chain dispatches on operationName.
 */
import { toGlobalId } from '../src/graphql/globalId.js';
import { pick, pickDistinct, seededRandom } from '../src/seed/seededRandom.js';
import type { Dataset } from './dataset.js';

export interface Operation {
  id: string;
  title: string;
  operationName: string;
  query: string;
  /**
   * A fresh variables stream; the same seed yields the same sequence. `tag` names the run
   * (system, phase) and keeps the idempotency keys of a mutation unique across runs.
   */
  variables(seed: number, tag: string): () => Record<string, unknown>;
  /** Requests one per batched level of the query (docs/design.md's rule), and why. */
  levels: { requests: number; why: string };
  mutation: boolean;
}

const ORDER_FIELDS = `id orderId status placedAt total { amount currencyCode }`;
const PRODUCT_FIELDS = `id productId name price { amount currencyCode } stock`;

export const USER_ORDERS_QUERY = `query UserOrders($userId: ID!, $after: String) {
  user(userId: $userId) {
    id userId name email
    orders(first: 20, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { cursor node { ${ORDER_FIELDS} items { productId quantity unitPrice { amount } product { ${PRODUCT_FIELDS} } } } }
    }
  }
}`;

/** The nested page: a user found by email, their orders, each order's user and products. */
const NESTED_PAGE_QUERY = `query NestedPage($email: String!) {
  userByEmail(email: $email) {
    id userId name email
    orders(first: 20) {
      edges { node { ${ORDER_FIELDS} user { id userId name email } items { productId quantity unitPrice { amount } product { ${PRODUCT_FIELDS} } } } }
    }
  }
}`;

const CATEGORY_PAGE_QUERY = `query CategoryPage($category: String!) {
  products(category: $category, first: 20) {
    pageInfo { hasNextPage endCursor }
    edges { cursor node { ${PRODUCT_FIELDS} description } }
  }
}`;

/** A product's page: the product, its rating and its 20 newest reviews. */
export const PRODUCT_REVIEWS_QUERY = `query ProductReviews($productId: ID!) {
  product(productId: $productId) {
    ${PRODUCT_FIELDS}
    rating { count average histogram }
    reviews(first: 20) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { cursor node { id reviewId rating title body authorName verifiedPurchase createdAt } }
    }
  }
}`;

const ORDER_DETAIL_QUERY = `query OrderDetail($orderId: ID!) {
  order(orderId: $orderId) {
    ${ORDER_FIELDS} updatedAt
    user { id userId name email }
    items { productId productName quantity unitPrice { amount } lineTotal { amount } product { ${PRODUCT_FIELDS} } }
  }
}`;

const NODES_QUERY = `query Nodes($ids: [ID!]!) {
  nodes(ids: $ids) {
    __typename id
    ... on User { userId name email }
    ... on Order { orderId status total { amount currencyCode } }
    ... on Product { productId name price { amount currencyCode } stock }
  }
}`;

const PLACE_ORDER_MUTATION = `mutation PlaceOrder($input: PlaceOrderInput!) {
  placeOrder(input: $input) {
    replayed
    userErrors { code field message }
    order { ${ORDER_FIELDS} items { productId productName quantity lineTotal { amount } } }
  }
}`;

/** Walks the scale partition 100 orders a request, keeping only the cursors. */
export const WALK_QUERY = `query Walk($userId: ID!, $after: String) {
  user(userId: $userId) { orders(first: 100, after: $after) { pageInfo { hasNextPage endCursor } } }
}`;

/** No DynamoDB call at all: what HTTP + GraphQL cost on their own. */
export const PING_QUERY = `query Ping { __typename }`;

export function operations(data: Dataset, runId: string): Operation[] {
  const stream = (seed: number) => seededRandom(seed);
  return [
    {
      id: 'userOrders',
      title: 'user + 20 orders + their products',
      operationName: 'UserOrders',
      query: USER_ORDERS_QUERY,
      mutation: false,
      levels: {
        requests: 2,
        why: 'the user with its orders page (one Query of its item collection), the orders’ products',
      },
      variables: (seed) => {
        const random = stream(seed);
        return () => ({ userId: pick(random, data.users).userId, after: null });
      },
    },
    {
      id: 'nestedPage',
      title: 'userByEmail → 20 orders → user, items → product',
      operationName: 'NestedPage',
      query: NESTED_PAGE_QUERY,
      mutation: false,
      levels: {
        requests: 3,
        why: 'the email index, the user’s orders page, the orders’ products (each order’s user is the one already read)',
      },
      variables: (seed) => {
        const random = stream(seed);
        return () => ({ email: pick(random, data.users).email });
      },
    },
    {
      id: 'categoryPage',
      title: 'product page (20) in a category',
      operationName: 'CategoryPage',
      query: CATEGORY_PAGE_QUERY,
      mutation: false,
      levels: { requests: 1, why: 'one GSI1 query' },
      variables: (seed) => {
        const random = stream(seed);
        return () => ({ category: pick(random, data.categories) });
      },
    },
    {
      id: 'productReviews',
      title: 'product + rating + 20 newest reviews',
      operationName: 'ProductReviews',
      query: PRODUCT_REVIEWS_QUERY,
      mutation: false,
      levels: {
        requests: 1,
        why: 'the product, its rating and its newest reviews: one Query of its item collection',
      },
      variables: (seed) => {
        const random = stream(seed);
        const reviewed = [...new Set(data.reviews.map((review) => review.productId))];
        return () => ({ productId: pick(random, reviewed) });
      },
    },
    {
      id: 'orderDetail',
      title: 'order + its user + its products',
      operationName: 'OrderDetail',
      query: ORDER_DETAIL_QUERY,
      mutation: false,
      levels: { requests: 2, why: 'the order, then its user and products together' },
      variables: (seed) => {
        const random = stream(seed);
        return () => ({ orderId: pick(random, data.orders).orderId });
      },
    },
    {
      id: 'nodes50',
      title: 'nodes(ids:) with 50 mixed ids',
      operationName: 'Nodes',
      query: NODES_QUERY,
      mutation: false,
      levels: { requests: 1, why: 'one BatchGetItem of 50 keys' },
      variables: (seed) => {
        const random = stream(seed);
        return () => {
          const ids = [
            ...pickDistinct(random, data.users, 10).map((u) => toGlobalId('User', u.userId)),
            ...pickDistinct(random, data.orders, 20).map((o) => toGlobalId('Order', o.orderId)),
            ...pickDistinct(random, data.products, 20).map((p) => toGlobalId('Product', p.productId)),
          ];
          for (let i = ids.length - 1; i > 0; i--) {
            const j = Math.floor(random() * (i + 1));
            [ids[i], ids[j]] = [ids[j] as string, ids[i] as string];
          }
          return { ids };
        };
      },
    },
    {
      id: 'placeOrder',
      title: 'placeOrder, 3 lines',
      operationName: 'PlaceOrder',
      query: PLACE_ORDER_MUTATION,
      mutation: true,
      levels: { requests: 2, why: 'read user + products (prices), one transaction' },
      variables: (seed, tag) => {
        const random = stream(seed);
        let n = 0;
        return () => ({
          input: {
            userId: pick(random, data.buyers).userId,
            items: pickDistinct(random, data.products, 3).map((p) => ({ productId: p.productId, quantity: 1 })),
            // Unique per request, per system and per run: every request places a new order.
            idempotencyKey: `${runId}-${tag}-${++n}`,
          },
        });
      },
    },
  ];
}
