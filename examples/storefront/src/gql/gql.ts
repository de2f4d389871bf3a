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
    "query Catalog($namePrefix: String, $inStock: Boolean, $minPrice: String, $maxPrice: String, $orderBy: ProductOrder, $first: Int, $after: String) {\n  products(\n    namePrefix: $namePrefix\n    inStock: $inStock\n    minPrice: $minPrice\n    maxPrice: $maxPrice\n    orderBy: $orderBy\n    first: $first\n    after: $after\n  ) {\n    nodes {\n      productId\n      name\n      category\n      stock\n      price {\n        amount\n        currencyCode\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}\n\nquery ProductDetails($productId: ID!) {\n  product(productId: $productId) {\n    productId\n    name\n    description\n    category\n    stock\n    price {\n      amount\n      currencyCode\n    }\n  }\n}\n\nmutation Checkout($input: PlaceOrderInput!) {\n  placeOrder(input: $input) {\n    order {\n      orderId\n      status\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}\n\nquery MyOrders($first: Int!, $after: String) {\n  viewer {\n    userId\n    name\n    orders(first: $first, after: $after) {\n      totalCount\n      nodes {\n        orderId\n        status\n        placedAt\n        total {\n          amount\n          currencyCode\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n}\n\nsubscription OrderStatus($orderId: ID!) {\n  orderUpdated(orderId: $orderId) {\n    order {\n      orderId\n      status\n    }\n  }\n}\n\nquery OrderDetails($orderId: ID!) {\n  order(orderId: $orderId) {\n    orderId\n    status\n    placedAt\n    total {\n      amount\n      currencyCode\n    }\n    items {\n      productName\n      quantity\n    }\n  }\n}": typeof types.CatalogDocument,
};
const documents: Documents = {
    "query Catalog($namePrefix: String, $inStock: Boolean, $minPrice: String, $maxPrice: String, $orderBy: ProductOrder, $first: Int, $after: String) {\n  products(\n    namePrefix: $namePrefix\n    inStock: $inStock\n    minPrice: $minPrice\n    maxPrice: $maxPrice\n    orderBy: $orderBy\n    first: $first\n    after: $after\n  ) {\n    nodes {\n      productId\n      name\n      category\n      stock\n      price {\n        amount\n        currencyCode\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}\n\nquery ProductDetails($productId: ID!) {\n  product(productId: $productId) {\n    productId\n    name\n    description\n    category\n    stock\n    price {\n      amount\n      currencyCode\n    }\n  }\n}\n\nmutation Checkout($input: PlaceOrderInput!) {\n  placeOrder(input: $input) {\n    order {\n      orderId\n      status\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}\n\nquery MyOrders($first: Int!, $after: String) {\n  viewer {\n    userId\n    name\n    orders(first: $first, after: $after) {\n      totalCount\n      nodes {\n        orderId\n        status\n        placedAt\n        total {\n          amount\n          currencyCode\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n}\n\nsubscription OrderStatus($orderId: ID!) {\n  orderUpdated(orderId: $orderId) {\n    order {\n      orderId\n      status\n    }\n  }\n}\n\nquery OrderDetails($orderId: ID!) {\n  order(orderId: $orderId) {\n    orderId\n    status\n    placedAt\n    total {\n      amount\n      currencyCode\n    }\n    items {\n      productName\n      quantity\n    }\n  }\n}": types.CatalogDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Catalog($namePrefix: String, $inStock: Boolean, $minPrice: String, $maxPrice: String, $orderBy: ProductOrder, $first: Int, $after: String) {\n  products(\n    namePrefix: $namePrefix\n    inStock: $inStock\n    minPrice: $minPrice\n    maxPrice: $maxPrice\n    orderBy: $orderBy\n    first: $first\n    after: $after\n  ) {\n    nodes {\n      productId\n      name\n      category\n      stock\n      price {\n        amount\n        currencyCode\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}\n\nquery ProductDetails($productId: ID!) {\n  product(productId: $productId) {\n    productId\n    name\n    description\n    category\n    stock\n    price {\n      amount\n      currencyCode\n    }\n  }\n}\n\nmutation Checkout($input: PlaceOrderInput!) {\n  placeOrder(input: $input) {\n    order {\n      orderId\n      status\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n  }\n}\n\nquery MyOrders($first: Int!, $after: String) {\n  viewer {\n    userId\n    name\n    orders(first: $first, after: $after) {\n      totalCount\n      nodes {\n        orderId\n        status\n        placedAt\n        total {\n          amount\n          currencyCode\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n}\n\nsubscription OrderStatus($orderId: ID!) {\n  orderUpdated(orderId: $orderId) {\n    order {\n      orderId\n      status\n    }\n  }\n}\n\nquery OrderDetails($orderId: ID!) {\n  order(orderId: $orderId) {\n    orderId\n    status\n    placedAt\n    total {\n      amount\n      currencyCode\n    }\n    items {\n      productName\n      quantity\n    }\n  }\n}"): typeof import('./graphql.js').CatalogDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
