/* eslint-disable */
import * as types from './graphql.js';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "mutation AddReview($input: AddReviewInput!) {\n  addReview(input: $input) {\n    review {\n      ...ReviewFields\n      product {\n        id\n        rating {\n          count\n          average\n          histogram\n        }\n      }\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": typeof types.AddReviewDocument,
    "query CategoryPage($category: String!, $first: Int = 5, $after: String) {\n  products(category: $category, first: $first, after: $after) {\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    nodes {\n      id\n      productId\n      name\n      description\n      price {\n        amount\n        currencyCode\n      }\n      stock\n    }\n  }\n}": typeof types.CategoryPageDocument,
    "mutation CreateUser($input: CreateUserInput!) {\n  createUser(input: $input) {\n    user {\n      userId\n      email\n      name\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": typeof types.CreateUserDocument,
    "mutation DeleteReview($input: DeleteReviewInput!) {\n  deleteReview(input: $input) {\n    deletedReviewId\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": typeof types.DeleteReviewDocument,
    "mutation PlaceOrder($input: PlaceOrderInput!) {\n  placeOrder(input: $input) {\n    order {\n      orderId\n      status\n      placedAt\n      total {\n        amount\n        currencyCode\n      }\n      items {\n        productId\n        quantity\n        lineTotal {\n          amount\n        }\n      }\n    }\n    replayed\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": typeof types.PlaceOrderDocument,
    "query ProductPage($productId: ID!, $reviews: Int = 10, $after: String, $orderBy: ReviewOrder = NEWEST) {\n  product(productId: $productId) {\n    id\n    productId\n    name\n    description\n    price {\n      amount\n      currencyCode\n    }\n    stock\n    rating {\n      count\n      average\n      histogram\n    }\n    reviews(first: $reviews, after: $after, orderBy: $orderBy) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...ReviewFields\n      }\n    }\n  }\n}": typeof types.ProductPageDocument,
    "fragment ReviewFields on Review {\n  id\n  reviewId\n  rating\n  title\n  body\n  authorName\n  verifiedPurchase\n  createdAt\n  updatedAt\n  version\n}": typeof types.ReviewFieldsFragmentDoc,
    "mutation UpdateReview($input: UpdateReviewInput!) {\n  updateReview(input: $input) {\n    review {\n      ...ReviewFields\n      product {\n        id\n        rating {\n          count\n          average\n          histogram\n        }\n      }\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": typeof types.UpdateReviewDocument,
    "query UserOrdersPage($userId: ID!, $first: Int = 5, $after: String) {\n  user(userId: $userId) {\n    userId\n    name\n    orders(first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          orderId\n          status\n          placedAt\n          total {\n            amount\n            currencyCode\n          }\n          items {\n            quantity\n            productName\n            unitPrice {\n              amount\n            }\n          }\n        }\n      }\n    }\n  }\n}": typeof types.UserOrdersPageDocument,
    "subscription WatchMyOrders {\n  orderEvents {\n    type\n    previousStatus\n    at\n    order {\n      orderId\n      status\n      total {\n        amount\n      }\n    }\n  }\n}": typeof types.WatchMyOrdersDocument,
    "subscription WatchReviews($productId: ID!) {\n  reviewAdded(productId: $productId) {\n    ...ReviewFields\n  }\n}": typeof types.WatchReviewsDocument,
};
const documents: Documents = {
    "mutation AddReview($input: AddReviewInput!) {\n  addReview(input: $input) {\n    review {\n      ...ReviewFields\n      product {\n        id\n        rating {\n          count\n          average\n          histogram\n        }\n      }\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": types.AddReviewDocument,
    "query CategoryPage($category: String!, $first: Int = 5, $after: String) {\n  products(category: $category, first: $first, after: $after) {\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    nodes {\n      id\n      productId\n      name\n      description\n      price {\n        amount\n        currencyCode\n      }\n      stock\n    }\n  }\n}": types.CategoryPageDocument,
    "mutation CreateUser($input: CreateUserInput!) {\n  createUser(input: $input) {\n    user {\n      userId\n      email\n      name\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": types.CreateUserDocument,
    "mutation DeleteReview($input: DeleteReviewInput!) {\n  deleteReview(input: $input) {\n    deletedReviewId\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": types.DeleteReviewDocument,
    "mutation PlaceOrder($input: PlaceOrderInput!) {\n  placeOrder(input: $input) {\n    order {\n      orderId\n      status\n      placedAt\n      total {\n        amount\n        currencyCode\n      }\n      items {\n        productId\n        quantity\n        lineTotal {\n          amount\n        }\n      }\n    }\n    replayed\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": types.PlaceOrderDocument,
    "query ProductPage($productId: ID!, $reviews: Int = 10, $after: String, $orderBy: ReviewOrder = NEWEST) {\n  product(productId: $productId) {\n    id\n    productId\n    name\n    description\n    price {\n      amount\n      currencyCode\n    }\n    stock\n    rating {\n      count\n      average\n      histogram\n    }\n    reviews(first: $reviews, after: $after, orderBy: $orderBy) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...ReviewFields\n      }\n    }\n  }\n}": types.ProductPageDocument,
    "fragment ReviewFields on Review {\n  id\n  reviewId\n  rating\n  title\n  body\n  authorName\n  verifiedPurchase\n  createdAt\n  updatedAt\n  version\n}": types.ReviewFieldsFragmentDoc,
    "mutation UpdateReview($input: UpdateReviewInput!) {\n  updateReview(input: $input) {\n    review {\n      ...ReviewFields\n      product {\n        id\n        rating {\n          count\n          average\n          histogram\n        }\n      }\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}": types.UpdateReviewDocument,
    "query UserOrdersPage($userId: ID!, $first: Int = 5, $after: String) {\n  user(userId: $userId) {\n    userId\n    name\n    orders(first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          orderId\n          status\n          placedAt\n          total {\n            amount\n            currencyCode\n          }\n          items {\n            quantity\n            productName\n            unitPrice {\n              amount\n            }\n          }\n        }\n      }\n    }\n  }\n}": types.UserOrdersPageDocument,
    "subscription WatchMyOrders {\n  orderEvents {\n    type\n    previousStatus\n    at\n    order {\n      orderId\n      status\n      total {\n        amount\n      }\n    }\n  }\n}": types.WatchMyOrdersDocument,
    "subscription WatchReviews($productId: ID!) {\n  reviewAdded(productId: $productId) {\n    ...ReviewFields\n  }\n}": types.WatchReviewsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation AddReview($input: AddReviewInput!) {\n  addReview(input: $input) {\n    review {\n      ...ReviewFields\n      product {\n        id\n        rating {\n          count\n          average\n          histogram\n        }\n      }\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}"): typeof import('./graphql.js').AddReviewDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query CategoryPage($category: String!, $first: Int = 5, $after: String) {\n  products(category: $category, first: $first, after: $after) {\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    nodes {\n      id\n      productId\n      name\n      description\n      price {\n        amount\n        currencyCode\n      }\n      stock\n    }\n  }\n}"): typeof import('./graphql.js').CategoryPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateUser($input: CreateUserInput!) {\n  createUser(input: $input) {\n    user {\n      userId\n      email\n      name\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}"): typeof import('./graphql.js').CreateUserDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation DeleteReview($input: DeleteReviewInput!) {\n  deleteReview(input: $input) {\n    deletedReviewId\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}"): typeof import('./graphql.js').DeleteReviewDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation PlaceOrder($input: PlaceOrderInput!) {\n  placeOrder(input: $input) {\n    order {\n      orderId\n      status\n      placedAt\n      total {\n        amount\n        currencyCode\n      }\n      items {\n        productId\n        quantity\n        lineTotal {\n          amount\n        }\n      }\n    }\n    replayed\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}"): typeof import('./graphql.js').PlaceOrderDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ProductPage($productId: ID!, $reviews: Int = 10, $after: String, $orderBy: ReviewOrder = NEWEST) {\n  product(productId: $productId) {\n    id\n    productId\n    name\n    description\n    price {\n      amount\n      currencyCode\n    }\n    stock\n    rating {\n      count\n      average\n      histogram\n    }\n    reviews(first: $reviews, after: $after, orderBy: $orderBy) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...ReviewFields\n      }\n    }\n  }\n}"): typeof import('./graphql.js').ProductPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "fragment ReviewFields on Review {\n  id\n  reviewId\n  rating\n  title\n  body\n  authorName\n  verifiedPurchase\n  createdAt\n  updatedAt\n  version\n}"): typeof import('./graphql.js').ReviewFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation UpdateReview($input: UpdateReviewInput!) {\n  updateReview(input: $input) {\n    review {\n      ...ReviewFields\n      product {\n        id\n        rating {\n          count\n          average\n          histogram\n        }\n      }\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}"): typeof import('./graphql.js').UpdateReviewDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query UserOrdersPage($userId: ID!, $first: Int = 5, $after: String) {\n  user(userId: $userId) {\n    userId\n    name\n    orders(first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        cursor\n        node {\n          orderId\n          status\n          placedAt\n          total {\n            amount\n            currencyCode\n          }\n          items {\n            quantity\n            productName\n            unitPrice {\n              amount\n            }\n          }\n        }\n      }\n    }\n  }\n}"): typeof import('./graphql.js').UserOrdersPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription WatchMyOrders {\n  orderEvents {\n    type\n    previousStatus\n    at\n    order {\n      orderId\n      status\n      total {\n        amount\n      }\n    }\n  }\n}"): typeof import('./graphql.js').WatchMyOrdersDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription WatchReviews($productId: ID!) {\n  reviewAdded(productId: $productId) {\n    ...ReviewFields\n  }\n}"): typeof import('./graphql.js').WatchReviewsDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
