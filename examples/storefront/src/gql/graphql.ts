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

/** Input of cancelOrder. */
export type CancelOrderInput = {
  /** The order to cancel; only a PLACED order can be cancelled. */
  orderId: string | number;
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

/** The order of a product's reviews. */
export type ReviewOrder =
  /** Most stars first; among equal stars, the newest first. */
  | 'HIGHEST_RATING'
  /** Fewest stars first; among equal stars, the oldest first (HIGHEST_RATING read the other way round). */
  | 'LOWEST_RATING'
  /** Newest first. */
  | 'NEWEST';

/** Up or down. */
export type SortDirection =
  /** Smallest (or A) first. */
  | 'ASC'
  /** Largest (or Z) first. */
  | 'DESC';

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
  reviews: number;
}>;


export type ProductDetailsQuery = { product: { productId: string, name: string, description: string, category: string, stock: number, soldCount: number, price: { amount: string, currencyCode: string }, rating: { count: number, average: number | null, histogram: Array<number> }, reviews: { nodes: Array<{ reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, version: number }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } } | null };

export type ProductReviewsQueryVariables = Exact<{
  productId: string | number;
  first: number;
  after?: string | null | undefined;
  orderBy: ReviewOrder;
}>;


export type ProductReviewsQuery = { product: { productId: string, reviews: { nodes: Array<{ reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, version: number }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } } | null };

export type MyReviewQueryVariables = Exact<{
  productId: string | number;
}>;


export type MyReviewQuery = { viewer: { userId: string, review: { reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, version: number } | null } | null };

export type StoreReviewFragment = { reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, version: number };

export type WriteReviewMutationVariables = Exact<{
  input: AddReviewInput;
}>;


export type WriteReviewMutation = { addReview: { review: { reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, version: number } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type EditReviewMutationVariables = Exact<{
  input: UpdateReviewInput;
}>;


export type EditReviewMutation = { updateReview: { review: { reviewId: string, rating: number, title: string, body: string, authorName: string, verifiedPurchase: boolean, createdAt: string, version: number } | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

export type RemoveReviewMutationVariables = Exact<{
  input: DeleteReviewInput;
}>;


export type RemoveReviewMutation = { deleteReview: { deletedReviewId: string | null, userErrors: Array<{ code: ErrorCode, field: Array<string> | null, message: string }> } };

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
export const StoreReviewFragmentDoc = new TypedDocumentString(`
    fragment StoreReview on Review {
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  version
}
    `, {"fragmentName":"StoreReview"}) as unknown as TypedDocumentString<StoreReviewFragment, unknown>;
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
    query ProductDetails($productId: ID!, $reviews: Int!) {
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
    rating {
      count
      average
      histogram
    }
    reviews(first: $reviews) {
      nodes {
        ...StoreReview
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
    fragment StoreReview on Review {
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  version
}`, {"hash":"sha256:0c19489071d53eb3ab6b5dd72524670e7d67ffa73c19fc49d748a34a8301a1d7"}) as unknown as TypedDocumentString<ProductDetailsQuery, ProductDetailsQueryVariables>;
export const ProductReviewsDocument = new TypedDocumentString(`
    query ProductReviews($productId: ID!, $first: Int!, $after: String, $orderBy: ReviewOrder!) {
  product(productId: $productId) {
    productId
    reviews(first: $first, after: $after, orderBy: $orderBy) {
      nodes {
        ...StoreReview
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
    fragment StoreReview on Review {
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  version
}`, {"hash":"sha256:740a237a771617973a85cf872f1b15c36cc36653f574296bbf495c5685cdd84c"}) as unknown as TypedDocumentString<ProductReviewsQuery, ProductReviewsQueryVariables>;
export const MyReviewDocument = new TypedDocumentString(`
    query MyReview($productId: ID!) {
  viewer {
    userId
    review(productId: $productId) {
      ...StoreReview
    }
  }
}
    fragment StoreReview on Review {
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  version
}`, {"hash":"sha256:667865db3ba80bd554c20a07d69320fa948bebe11f2bb7008d1254077c67477f"}) as unknown as TypedDocumentString<MyReviewQuery, MyReviewQueryVariables>;
export const WriteReviewDocument = new TypedDocumentString(`
    mutation WriteReview($input: AddReviewInput!) {
  addReview(input: $input) {
    review {
      ...StoreReview
    }
    userErrors {
      code
      field
      message
    }
  }
}
    fragment StoreReview on Review {
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  version
}`, {"hash":"sha256:8027016a86b3f40cedeaf6c05debef9159571d2bdef7bee1c4bd31170886531b"}) as unknown as TypedDocumentString<WriteReviewMutation, WriteReviewMutationVariables>;
export const EditReviewDocument = new TypedDocumentString(`
    mutation EditReview($input: UpdateReviewInput!) {
  updateReview(input: $input) {
    review {
      ...StoreReview
    }
    userErrors {
      code
      field
      message
    }
  }
}
    fragment StoreReview on Review {
  reviewId
  rating
  title
  body
  authorName
  verifiedPurchase
  createdAt
  version
}`, {"hash":"sha256:5431e8406db1cce0b5f9633fbead6602a3c89be8da3c7a32aa077a6b0f5aa82a"}) as unknown as TypedDocumentString<EditReviewMutation, EditReviewMutationVariables>;
export const RemoveReviewDocument = new TypedDocumentString(`
    mutation RemoveReview($input: DeleteReviewInput!) {
  deleteReview(input: $input) {
    deletedReviewId
    userErrors {
      code
      field
      message
    }
  }
}
    `, {"hash":"sha256:84e68fe27c2578bff953ee3d48f21c20d680cbd30089bab601f5e473423cef86"}) as unknown as TypedDocumentString<RemoveReviewMutation, RemoveReviewMutationVariables>;
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