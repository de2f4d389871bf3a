/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** Input of cancelOrder. */
export type CancelOrderInput = {
  /** The order to cancel; only a PLACED order can be cancelled. */
  orderId: string | number;
};

/**
 * Why a mutation changed nothing. Expected business failures come back as `userErrors` in the
 * payload; GraphQL errors are kept for malformed requests and failures of the server.
 */
export type ErrorCode =
  /** createUser/updateUser: another user has this email address. */
  | 'EMAIL_TAKEN'
  /** placeOrder: this idempotencyKey was already used by this user for a different order. */
  | 'IDEMPOTENCY_KEY_REUSED'
  /** placeOrder: fewer units are in stock than the line asks for. */
  | 'INSUFFICIENT_STOCK'
  /** The input broke a rule (format, length, range); `message` says which. */
  | 'INVALID_INPUT'
  /** The order's current status does not allow this change. */
  | 'INVALID_STATUS'
  /** A referenced user, product or order does not exist. */
  | 'NOT_FOUND'
  /** createProduct: a product with this productId exists. */
  | 'PRODUCT_EXISTS'
  /** createUser: a user with this userId exists. */
  | 'USER_EXISTS'
  /** expectedVersion is not the record's current version: someone else changed it first. Re-read and retry. */
  | 'VERSION_CONFLICT';

/** One line of placeOrder's input. */
export type OrderLineInput = {
  /** The product to order. Each product may appear in one line only. */
  productId: string | number;
  /** Units to order, 1 to 1000. */
  quantity: number;
};

/** The lifecycle of an order: PLACED -> SHIPPED -> DELIVERED, or PLACED -> CANCELLED. */
export type OrderStatus =
  /** Cancelled before shipping; its stock was returned. */
  | 'CANCELLED'
  /** Received by the customer. */
  | 'DELIVERED'
  /** Placed and paid; stock is reserved. */
  | 'PLACED'
  /** Handed to the carrier. */
  | 'SHIPPED';

/** Input of placeOrder. */
export type PlaceOrderInput = {
  /**
   * A key the client makes up once per order (1-64 characters of A-Z a-z 0-9 _ -) and sends
   * again on every retry of it. Scoped to the user: a repeat with the same items returns the
   * same order and changes nothing; with other items it is IDEMPOTENCY_KEY_REUSED.
   */
  idempotencyKey: string;
  /** The products and quantities: 1 to 97 lines (what one DynamoDB transaction can hold). */
  items: Array<OrderLineInput>;
  /** The user placing the order. */
  userId: string | number;
};

/** The order of a product listing. */
export type ProductOrder = {
  /** Which way; ascending unless given. */
  direction?: SortDirection | null | undefined;
  /** What to sort by. */
  field: ProductOrderField;
};

/** What the catalog can be sorted by. */
export type ProductOrderField =
  /** Lower-cased name, then productId. */
  | 'NAME'
  /** Unit price, then productId. */
  | 'PRICE';

/** Up or down. */
export type SortDirection =
  /** Smallest (or A) first. */
  | 'ASC'
  /** Largest (or Z) first. */
  | 'DESC';

export type CategoriesQueryVariables = Exact<{ [key: string]: never; }>;


export type CategoriesQuery = { categories: Array<{ name: string, productCount: number }> };

export type CatalogQueryVariables = Exact<{
  category?: string | null | undefined;
  namePrefix?: string | null | undefined;
  inStock?: boolean | null | undefined;
  minPrice?: string | null | undefined;
  maxPrice?: string | null | undefined;
  orderBy?: ProductOrder | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type CatalogQuery = { products: { totalCount: number | null, nodes: Array<{ productId: string, name: string, category: string, stock: number, price: { amount: string, currencyCode: string } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type ProductDetailsQueryVariables = Exact<{
  productId: string | number;
}>;


export type ProductDetailsQuery = { product: { productId: string, name: string, description: string, category: string, stock: number, soldCount: number, price: { amount: string, currencyCode: string } } | null };

export type ViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ViewerQuery = { viewer: { userId: string, name: string, email: string } | null };

export type CheckoutMutationVariables = Exact<{
  input: PlaceOrderInput;
}>;


export type CheckoutMutation = { placeOrder: { replayed: boolean, order: { orderId: string, status: OrderStatus } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type MyOrdersQueryVariables = Exact<{
  first: number;
  after?: string | null | undefined;
}>;


export type MyOrdersQuery = { viewer: { userId: string, orders: { totalCount: number | null, nodes: Array<{ orderId: string, status: OrderStatus, placedAt: string, total: { amount: string, currencyCode: string }, items: Array<{ quantity: number }> }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } } | null };

export type OrderDetailsQueryVariables = Exact<{
  orderId: string | number;
}>;


export type OrderDetailsQuery = { order: { orderId: string, status: OrderStatus, placedAt: string, updatedAt: string, total: { amount: string, currencyCode: string }, items: Array<{ productId: string, productName: string, quantity: number, unitPrice: { amount: string, currencyCode: string }, lineTotal: { amount: string, currencyCode: string } }> } | null };

export type CancelOrderMutationVariables = Exact<{
  input: CancelOrderInput;
}>;


export type CancelOrderMutation = { cancelOrder: { order: { orderId: string, status: OrderStatus, updatedAt: string } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type OrderStatusSubscriptionVariables = Exact<{
  orderId: string | number;
}>;


export type OrderStatusSubscription = { orderUpdated: { order: { orderId: string, status: OrderStatus, updatedAt: string } } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const CategoriesDocument = new TypedDocumentString(`
    query Categories {
  categories {
    name
    productCount
  }
}
    `, {"hash":"sha256:6a60f1c8b96c457c4e3aa2a59173571ef499a9bc9d7e1e123f0e8a2338159afa"}) as unknown as TypedDocumentString<CategoriesQuery, CategoriesQueryVariables>;
export const CatalogDocument = new TypedDocumentString(`
    query Catalog($category: String, $namePrefix: String, $inStock: Boolean, $minPrice: String, $maxPrice: String, $orderBy: ProductOrder, $first: Int, $after: String) {
  products(
    category: $category
    namePrefix: $namePrefix
    inStock: $inStock
    minPrice: $minPrice
    maxPrice: $maxPrice
    orderBy: $orderBy
    first: $first
    after: $after
  ) {
    totalCount
    nodes {
      productId
      name
      category
      stock
      price {
        amount
        currencyCode
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    `, {"hash":"sha256:6ad7e37d2141d5fc81e27eab238c33277fb54b03ea9a449bcad58a4239aa7ff9"}) as unknown as TypedDocumentString<CatalogQuery, CatalogQueryVariables>;
export const ProductDetailsDocument = new TypedDocumentString(`
    query ProductDetails($productId: ID!) {
  product(productId: $productId) {
    productId
    name
    description
    category
    stock
    soldCount
    price {
      amount
      currencyCode
    }
  }
}
    `, {"hash":"sha256:cb9779fb4044200be01868904fe9ad1bf0e9fb08ac2c3e81a191f26727b04535"}) as unknown as TypedDocumentString<ProductDetailsQuery, ProductDetailsQueryVariables>;
export const ViewerDocument = new TypedDocumentString(`
    query Viewer {
  viewer {
    userId
    name
    email
  }
}
    `, {"hash":"sha256:afb5781d43bb9b8553472d4b4a5d8cdadd307f4d88f5ebf19bc8764ffae027c8"}) as unknown as TypedDocumentString<ViewerQuery, ViewerQueryVariables>;
export const CheckoutDocument = new TypedDocumentString(`
    mutation Checkout($input: PlaceOrderInput!) {
  placeOrder(input: $input) {
    replayed
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
    `, {"hash":"sha256:25a46632e177f9a2839f49be493718a48dbe88407e98e238ce4996cd84d3615c"}) as unknown as TypedDocumentString<CheckoutMutation, CheckoutMutationVariables>;
export const MyOrdersDocument = new TypedDocumentString(`
    query MyOrders($first: Int!, $after: String) {
  viewer {
    userId
    orders(first: $first, after: $after) {
      totalCount
      nodes {
        orderId
        status
        placedAt
        total {
          amount
          currencyCode
        }
        items {
          quantity
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
    `, {"hash":"sha256:e2281fc6ac4d5f58708ecd8bffee880cd49fc2175d4d7afa5fc72ba88d826f38"}) as unknown as TypedDocumentString<MyOrdersQuery, MyOrdersQueryVariables>;
export const OrderDetailsDocument = new TypedDocumentString(`
    query OrderDetails($orderId: ID!) {
  order(orderId: $orderId) {
    orderId
    status
    placedAt
    updatedAt
    total {
      amount
      currencyCode
    }
    items {
      productId
      productName
      quantity
      unitPrice {
        amount
        currencyCode
      }
      lineTotal {
        amount
        currencyCode
      }
    }
  }
}
    `, {"hash":"sha256:a598318d5a455b278a8c759f41b9f84347719b7d9724378cd2f159dc7e6f7510"}) as unknown as TypedDocumentString<OrderDetailsQuery, OrderDetailsQueryVariables>;
export const CancelOrderDocument = new TypedDocumentString(`
    mutation CancelOrder($input: CancelOrderInput!) {
  cancelOrder(input: $input) {
    order {
      orderId
      status
      updatedAt
    }
    userErrors {
      code
      field
      message
    }
  }
}
    `, {"hash":"sha256:aa7afcd1d2cbe9189f06a9098c5a0b42fb7c340ac3c662d62b5e834b9994d7bd"}) as unknown as TypedDocumentString<CancelOrderMutation, CancelOrderMutationVariables>;
export const OrderStatusDocument = new TypedDocumentString(`
    subscription OrderStatus($orderId: ID!) {
  orderUpdated(orderId: $orderId) {
    order {
      orderId
      status
      updatedAt
    }
  }
}
    `, {"hash":"sha256:4966ce3b2a65cf42a55ad517083544a398b0916385abadd739acee21d461db29"}) as unknown as TypedDocumentString<OrderStatusSubscription, OrderStatusSubscriptionVariables>;