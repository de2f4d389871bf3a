/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** Input of addReview. */
export type AddReviewInput = {
  /** The review, at most 5,000 characters (it may be empty). */
  body: string;
  /** The product to review. */
  productId: string | number;
  /** Stars, 1 to 5. */
  rating: number;
  /** A headline, 1-120 characters. */
  title: string;
};

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

/** Input of deleteReview. */
export type DeleteReviewInput = {
  /** The review to delete: its author or an admin may. */
  reviewId: string | number;
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
  /** addReview: the viewer has reviewed this product already (edit that review instead). */
  | 'REVIEW_EXISTS'
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

/** The order of a product's reviews. */
export type ReviewOrder =
  /** Most stars first; among equal stars, the newest first. */
  | 'HIGHEST_RATING'
  /** Fewest stars first; among equal stars, the oldest first (HIGHEST_RATING read the other way round). */
  | 'LOWEST_RATING'
  /** Newest first. */
  | 'NEWEST';

/** Input of updateReview. Fields left out stay as they are. */
export type UpdateReviewInput = {
  /** New text, at most 5,000 characters. */
  body?: string | null | undefined;
  /** The version the client last read; the update fails with VERSION_CONFLICT if it moved on. */
  expectedVersion: number;
  /** New stars, 1 to 5. */
  rating?: number | null | undefined;
  /** The review to change: only its author may. */
  reviewId: string | number;
  /** New headline, 1-120 characters. */
  title?: string | null | undefined;
};

export type AddReviewMutationVariables = Exact<{
  input: AddReviewInput;
}>;


export type AddReviewMutation = { addReview: { review: { id: string, reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, updatedAt: string, version: number, product: { id: string, rating: { count: number, average: number | null, histogram: Array<number> } } | null } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

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

export type DeleteReviewMutationVariables = Exact<{
  input: DeleteReviewInput;
}>;


export type DeleteReviewMutation = { deleteReview: { deletedReviewId: string | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type PlaceOrderMutationVariables = Exact<{
  input: PlaceOrderInput;
}>;


export type PlaceOrderMutation = { placeOrder: { replayed: boolean, order: { orderId: string, status: OrderStatus, placedAt: string, total: { amount: string, currencyCode: string }, items: Array<{ productId: string, quantity: number, lineTotal: { amount: string } }> } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type ProductPageQueryVariables = Exact<{
  productId: string | number;
  reviews?: number | null | undefined;
  after?: string | null | undefined;
  orderBy?: ReviewOrder | null | undefined;
}>;


export type ProductPageQuery = { product: { id: string, productId: string, name: string, description: string, stock: number, price: { amount: string, currencyCode: string }, rating: { count: number, average: number | null, histogram: Array<number> }, reviews: { totalCount: number | null, pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ id: string, reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, updatedAt: string, version: number }> } } | null };

export type ReviewFieldsFragment = { id: string, reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, updatedAt: string, version: number };

export type UpdateReviewMutationVariables = Exact<{
  input: UpdateReviewInput;
}>;


export type UpdateReviewMutation = { updateReview: { review: { id: string, reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, updatedAt: string, version: number, product: { id: string, rating: { count: number, average: number | null, histogram: Array<number> } } | null } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type UserOrdersPageQueryVariables = Exact<{
  userId: string | number;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type UserOrdersPageQuery = { user: { userId: string, name: string, orders: { totalCount: number | null, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ cursor: string, node: { orderId: string, status: OrderStatus, placedAt: string, total: { amount: string, currencyCode: string }, items: Array<{ quantity: number, productName: string, unitPrice: { amount: string } }> } }> } } | null };

export type WatchMyOrdersSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type WatchMyOrdersSubscription = { orderEvents: { type: OrderEventType, previousStatus: OrderStatus | null, at: string, order: { orderId: string, status: OrderStatus, total: { amount: string } } } };

export type WatchReviewsSubscriptionVariables = Exact<{
  productId: string | number;
}>;


export type WatchReviewsSubscription = { reviewAdded: { id: string, reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, updatedAt: string, version: number } };

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
export const ReviewFieldsFragmentDoc = new TypedDocumentString(`
    fragment ReviewFields on Review {
  id
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  updatedAt
  version
}
    `, {"fragmentName":"ReviewFields"}) as unknown as TypedDocumentString<ReviewFieldsFragment, unknown>;
export const AddReviewDocument = new TypedDocumentString(`
    mutation AddReview($input: AddReviewInput!) {
  addReview(input: $input) {
    review {
      ...ReviewFields
      product {
        id
        rating {
          count
          average
          histogram
        }
      }
    }
    userErrors {
      code
      field
      message
    }
  }
}
    fragment ReviewFields on Review {
  id
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  updatedAt
  version
}`, {"hash":"sha256:5eee1c27d139430d57ce17930e08fc0b76fbbea5cd44e29dc5efa76c9475a12d"}) as unknown as TypedDocumentString<AddReviewMutation, AddReviewMutationVariables>;
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
export const DeleteReviewDocument = new TypedDocumentString(`
    mutation DeleteReview($input: DeleteReviewInput!) {
  deleteReview(input: $input) {
    deletedReviewId
    userErrors {
      code
      field
      message
    }
  }
}
    `, {"hash":"sha256:9e32852885a370271d2187ac4f7b9fe46d26984a4e89e206702d54966deae244"}) as unknown as TypedDocumentString<DeleteReviewMutation, DeleteReviewMutationVariables>;
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
export const ProductPageDocument = new TypedDocumentString(`
    query ProductPage($productId: ID!, $reviews: Int = 10, $after: String, $orderBy: ReviewOrder = NEWEST) {
  product(productId: $productId) {
    id
    productId
    name
    description
    price {
      amount
      currencyCode
    }
    stock
    rating {
      count
      average
      histogram
    }
    reviews(first: $reviews, after: $after, orderBy: $orderBy) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        ...ReviewFields
      }
    }
  }
}
    fragment ReviewFields on Review {
  id
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  updatedAt
  version
}`, {"hash":"sha256:1bfe1d3bb5f084596f42aab2604a24d8b3aae95ccb1a36b51fc07b3bd74acbc1"}) as unknown as TypedDocumentString<ProductPageQuery, ProductPageQueryVariables>;
export const UpdateReviewDocument = new TypedDocumentString(`
    mutation UpdateReview($input: UpdateReviewInput!) {
  updateReview(input: $input) {
    review {
      ...ReviewFields
      product {
        id
        rating {
          count
          average
          histogram
        }
      }
    }
    userErrors {
      code
      field
      message
    }
  }
}
    fragment ReviewFields on Review {
  id
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  updatedAt
  version
}`, {"hash":"sha256:5083eeb4e6a7c19ac73de0ae26462bad69379b9bc4ade8c8f34d06582f3bda92"}) as unknown as TypedDocumentString<UpdateReviewMutation, UpdateReviewMutationVariables>;
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
export const WatchReviewsDocument = new TypedDocumentString(`
    subscription WatchReviews($productId: ID!) {
  reviewAdded(productId: $productId) {
    ...ReviewFields
  }
}
    fragment ReviewFields on Review {
  id
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  updatedAt
  version
}`, {"hash":"sha256:bc84e05480249a8c0b127b5e162cf90bf97c397cdf0ae46704fd80a8cd6c5446"}) as unknown as TypedDocumentString<WatchReviewsSubscription, WatchReviewsSubscriptionVariables>;