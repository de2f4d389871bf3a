/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** Input of createUser. */
export type CreateUserInput = {
  /**
   * Email address; stored in NFKC, lower-cased, and unique across users. When the token carries a
   * verified `email` claim, it must be that address.
   */
  email: string;
  /** Display name, 1-100 characters. */
  name: string;
  /**
   * The new user's key. Leave it out: the profile's userId is the token's subject (`sub`). Only an
   * admin may name another userId (1-64 characters of A-Z a-z 0-9 _ -); a customer naming one is FORBIDDEN.
   */
  userId?: string | number | null | undefined;
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

/** What happened to an order. */
export type OrderEventType =
  /** The order was placed. */
  | 'ORDER_PLACED'
  /** The order's status changed (shipped, delivered, cancelled). */
  | 'ORDER_STATUS_CHANGED';

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

export type CategoryPageQueryVariables = Exact<{
  category: string;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type CategoryPageQuery = { products: { pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ id: string, productId: string, name: string, description: string, stock: number, price: { amount: string, currencyCode: string } }> } };

export type CreateUserMutationVariables = Exact<{
  input: CreateUserInput;
}>;


export type CreateUserMutation = { createUser: { user: { userId: string, email: string, name: string } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type PlaceOrderMutationVariables = Exact<{
  input: PlaceOrderInput;
}>;


export type PlaceOrderMutation = { placeOrder: { replayed: boolean, order: { orderId: string, status: OrderStatus, placedAt: string, total: { amount: string, currencyCode: string }, items: Array<{ productId: string, quantity: number, lineTotal: { amount: string } }> } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type UserOrdersPageQueryVariables = Exact<{
  userId: string | number;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type UserOrdersPageQuery = { user: { userId: string, name: string, orders: { totalCount: number | null, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ cursor: string, node: { orderId: string, status: OrderStatus, placedAt: string, total: { amount: string, currencyCode: string }, items: Array<{ quantity: number, productName: string, unitPrice: { amount: string } }> } }> } } | null };

export type WatchMyOrdersSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type WatchMyOrdersSubscription = { orderEvents: { type: OrderEventType, previousStatus: OrderStatus | null, at: string, order: { orderId: string, status: OrderStatus, total: { amount: string } } } };

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

export const CategoryPageDocument = new TypedDocumentString(`
    query CategoryPage($category: String!, $first: Int = 5, $after: String) {
  products(category: $category, first: $first, after: $after) {
    pageInfo {
      hasNextPage
      endCursor
    }
    nodes {
      id
      productId
      name
      description
      price {
        amount
        currencyCode
      }
      stock
    }
  }
}
    `, {"hash":"sha256:69ebd33557a9b48a6b8b36232575ce4f60998758848b3135b8c2b3d85ce40c9d"}) as unknown as TypedDocumentString<CategoryPageQuery, CategoryPageQueryVariables>;
export const CreateUserDocument = new TypedDocumentString(`
    mutation CreateUser($input: CreateUserInput!) {
  createUser(input: $input) {
    user {
      userId
      email
      name
    }
    userErrors {
      code
      field
      message
    }
  }
}
    `, {"hash":"sha256:3e81adae5b0bd41bcbf72b3e941646c6fe8c562f6f27641f86a69fe8d2f3002b"}) as unknown as TypedDocumentString<CreateUserMutation, CreateUserMutationVariables>;
export const PlaceOrderDocument = new TypedDocumentString(`
    mutation PlaceOrder($input: PlaceOrderInput!) {
  placeOrder(input: $input) {
    order {
      orderId
      status
      placedAt
      total {
        amount
        currencyCode
      }
      items {
        productId
        quantity
        lineTotal {
          amount
        }
      }
    }
    replayed
    userErrors {
      code
      field
      message
    }
  }
}
    `, {"hash":"sha256:cadbedace570966689b84484f00f3285d1b71feb5c3ce44c1f0a95cd156282e1"}) as unknown as TypedDocumentString<PlaceOrderMutation, PlaceOrderMutationVariables>;
export const UserOrdersPageDocument = new TypedDocumentString(`
    query UserOrdersPage($userId: ID!, $first: Int = 5, $after: String) {
  user(userId: $userId) {
    userId
    name
    orders(first: $first, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        cursor
        node {
          orderId
          status
          placedAt
          total {
            amount
            currencyCode
          }
          items {
            quantity
            productName
            unitPrice {
              amount
            }
          }
        }
      }
    }
  }
}
    `, {"hash":"sha256:08dfea2eaff1d07e168e02540c2e5082cc8393da23371a48f160a4ec30138f07"}) as unknown as TypedDocumentString<UserOrdersPageQuery, UserOrdersPageQueryVariables>;
export const WatchMyOrdersDocument = new TypedDocumentString(`
    subscription WatchMyOrders {
  orderEvents {
    type
    previousStatus
    at
    order {
      orderId
      status
      total {
        amount
      }
    }
  }
}
    `, {"hash":"sha256:61ebe5e682896eee9bbb34c602d82504c06f06cecd379d5a7e0ca6459a9fa790"}) as unknown as TypedDocumentString<WatchMyOrdersSubscription, WatchMyOrdersSubscriptionVariables>;