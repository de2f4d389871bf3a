/** Parent types of the connection resolvers (codegen `mappers` in codegen.yml point here). */
import type { Edge, Page } from '../db/pagination.js';
import type { ChangeEventOf } from '../events/changeEvent.js';
import type { OrderModel, ProductModel, ReviewModel, UserModel } from '../table/models.js';
import type { ErrorCode } from '../generated/resolvers-types.js';
import type { UserError, UserErrorCode } from '../writes/userErrors.js';

export type OrderEdgeModel = Edge<OrderModel>;
/** `OrderEvent`: an order's change event, as every bus carries it (its node is the order). */
export type OrderEventModel = ChangeEventOf<'Order'>;
/** A review's change event: `reviewAdded` answers its node. */
export type ReviewEventModel = ChangeEventOf<'Review'>;
export type ProductEdgeModel = Edge<ProductModel>;
/**
 * `totalCount` rides along from the user's profile: no read of its own. A function when it
 * may be refused (a per-status count on a table not migrated yet), so only a query that
 * selects it is.
 */
export type OrderConnectionModel = Page<OrderModel> & { totalCount: number | null | (() => number | null) };
/**
 * `totalCount`: a category's counter, known already (a number), to be read only if selected
 * (`countOf`: the category whose counter it is), or none (null).
 */
export type ProductConnectionModel = Page<ProductModel> & {
  totalCount: number | null | { countOf: string };
};
export type ReviewEdgeModel = Edge<ReviewModel>;
/** A product's page of reviews; `totalCount` is its rating's count, read (with the rating) only if selected. */
export type ReviewConnectionModel = Page<ReviewModel> & { productId: string };

/** Mutation payloads: the changed entity (null when nothing changed) and the reasons why not. */
interface Payload {
  userErrors: UserError[];
}
export type CreateUserPayloadModel = Payload & { user: UserModel | null };
export type UpdateUserPayloadModel = CreateUserPayloadModel;
export type CreateProductPayloadModel = Payload & { product: ProductModel | null };
export type UpdateProductPayloadModel = CreateProductPayloadModel;
export type PlaceOrderPayloadModel = Payload & { order: OrderModel | null; replayed: boolean };
export type CancelOrderPayloadModel = Payload & { order: OrderModel | null };
export type UpdateOrderStatusPayloadModel = CancelOrderPayloadModel;
export type AddReviewPayloadModel = Payload & { review: ReviewModel | null };
export type DeleteReviewPayloadModel = Payload & { deletedReviewId: string | null };

/**
 * The writes' failure codes are the schema's `ErrorCode` enum, no more and no fewer: a code
 * added on one side only fails the typecheck here.
 */
type SameCodes<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const USER_ERROR_CODES_MATCH_SCHEMA: SameCodes<UserErrorCode, ErrorCode> = true;
