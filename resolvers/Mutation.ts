import type { Access } from '../src/auth/access.js';
import type { Loaders } from '../src/db/loaders.js';
import type {
  MutationAddReviewArgs,
  MutationCancelOrderArgs,
  MutationCreateProductArgs,
  MutationCreateUserArgs,
  MutationDeleteReviewArgs,
  MutationPlaceOrderArgs,
  MutationResolvers,
  MutationUpdateOrderStatusArgs,
  MutationUpdateProductArgs,
  MutationUpdateReviewArgs,
  MutationUpdateUserArgs,
} from '../src/generated/resolvers-types.js';
import type { GraphQLContext } from '../src/graphql/context.js';
import { promised, writeField } from '../src/graphql/writeField.js';
import type { WriteRecord } from '../src/graphql/writeRecord.js';
import type { NodeModel, OrderModel, ProductModel, ReviewModel, UserModel } from '../src/table/models.js';
import { cancelOrder, updateOrderStatus } from '../src/writes/orderStatus.js';
import { placeOrderThen } from '../src/writes/placeOrder.js';
import type { PlacedOrder } from '../src/writes/placeOrder.js';
import { createProduct, updateProduct } from '../src/writes/products.js';
import { addReview, deleteReview, updateReview } from '../src/writes/reviews.js';
import { createUser, updateUser } from '../src/writes/users.js';
import type { WriteResult } from '../src/writes/userErrors.js';

/**
 * Read-your-writes inside the request: what the write touched is dropped from the request's
 * loaders (a product's stock, the user's orderCount, pages listing them), and the written
 * entity is primed, so `user { ... }` on the payload needs no read. The write goes on the
 * request's record of writes, whose tags the response cache evicts before the answer leaves.
 */
function remember<T extends NodeModel>(loaders: Loaders, wrote: WriteRecord, result: WriteResult<T>): T | null {
  if (!result.ok) return null;
  wrote.note(result.touched, result.value);
  loaders.forgetTouched(result.touched);
  loaders.prime(result.value);
  return result.value;
}

const errorsOf = <T>(result: WriteResult<T>) => (result.ok ? [] : result.userErrors);

/** The viewer as the writer of a review: signed in (UNAUTHENTICATED otherwise), an admin or not. */
const reviewer = (access: Access) => {
  const viewer = access.requireViewer();
  return { userId: viewer.userId, admin: viewer.role === 'admin' };
};

export const Mutation: MutationResolvers = {
  createUser: writeField({
    write: ({ input }: MutationCreateUserArgs, { access, data }, then) => {
      const { userId, verifiedEmail } = access.profileOwner(input.userId);
      return promised(createUser(data, { ...input, userId }, { verifiedEmail }), then);
    },
    payload: (result: WriteResult<UserModel>, _: unknown, { loaders, wrote }: GraphQLContext) => ({
      user: remember(loaders, wrote, result),
      userErrors: errorsOf(result),
    }),
  }),
  updateUser: writeField({
    write: ({ input }: MutationUpdateUserArgs, { access, data }, then) => {
      access.requireSelfOrAdmin(input.userId, 'edit a profile');
      return promised(updateUser(data, input), then);
    },
    payload: (result: WriteResult<UserModel>, _: unknown, { loaders, wrote }: GraphQLContext) => ({
      user: remember(loaders, wrote, result),
      userErrors: errorsOf(result),
    }),
  }),
  createProduct: writeField({
    write: ({ input }: MutationCreateProductArgs, { access, data }, then) => {
      access.requireAdmin('create products');
      return promised(createProduct(data, input), then);
    },
    payload: (result: WriteResult<ProductModel>, _: unknown, { loaders, wrote }: GraphQLContext) => ({
      product: remember(loaders, wrote, result),
      userErrors: errorsOf(result),
    }),
  }),
  updateProduct: writeField({
    write: ({ input }: MutationUpdateProductArgs, { access, data }, then) => {
      access.requireAdmin('edit products');
      return promised(updateProduct(data, input), then);
    },
    payload: (result: WriteResult<ProductModel>, _: unknown, { loaders, wrote }: GraphQLContext) => ({
      product: remember(loaders, wrote, result),
      userErrors: errorsOf(result),
    }),
  }),
  // Its write hands its result on within its last request's `then`: one promise per request.
  placeOrder: writeField({
    write: ({ input }: MutationPlaceOrderArgs, { access, data }, then) => {
      access.requireSelfOrAdmin(input.userId, 'place orders');
      return placeOrderThen(data, input, new Date(), then);
    },
    payload: (result: WriteResult<PlacedOrder>, _: unknown, { loaders, wrote }: GraphQLContext) => {
      if (!result.ok) return { order: null, replayed: false, userErrors: result.userErrors };
      wrote.note(result.touched, result.value.order);
      loaders.forgetTouched(result.touched);
      loaders.prime(result.value.order);
      return { order: result.value.order, replayed: result.value.replayed, userErrors: [] };
    },
  }),
  cancelOrder: writeField({
    write: ({ input }: MutationCancelOrderArgs, { access, data }, then) => {
      access.requireViewer();
      // Another customer's order reads as NOT_FOUND, exactly like an order that does not exist.
      return promised(
        cancelOrder(data, input, (order) => access.owns(order.userId)),
        then,
      );
    },
    payload: (result: WriteResult<OrderModel>, _: unknown, { loaders, wrote }: GraphQLContext) => ({
      order: remember(loaders, wrote, result),
      userErrors: errorsOf(result),
    }),
  }),
  updateOrderStatus: writeField({
    write: ({ input }: MutationUpdateOrderStatusArgs, { access, data }, then) => {
      access.requireAdmin("change an order's status");
      return promised(updateOrderStatus(data, input), then);
    },
    payload: (result: WriteResult<OrderModel>, _: unknown, { loaders, wrote }: GraphQLContext) => ({
      order: remember(loaders, wrote, result),
      userErrors: errorsOf(result),
    }),
  }),
  addReview: writeField({
    write: ({ input }: MutationAddReviewArgs, { access, data }, then) =>
      promised(addReview(data, reviewer(access), input), then),
    payload: (result: WriteResult<ReviewModel>, _: unknown, { loaders, wrote }: GraphQLContext) => ({
      review: remember(loaders, wrote, result),
      userErrors: errorsOf(result),
    }),
  }),
  updateReview: writeField({
    // Another customer's review reads as NOT_FOUND, exactly like a review that does not exist.
    write: ({ input }: MutationUpdateReviewArgs, { access, data }, then) =>
      promised(updateReview(data, reviewer(access), input), then),
    payload: (result: WriteResult<ReviewModel>, _: unknown, { loaders, wrote }: GraphQLContext) => ({
      review: remember(loaders, wrote, result),
      userErrors: errorsOf(result),
    }),
  }),
  deleteReview: writeField({
    write: ({ input }: MutationDeleteReviewArgs, { access, data }, then) =>
      promised(deleteReview(data, reviewer(access), input), then),
    payload: (result: WriteResult<string>, _: unknown, { loaders, wrote }: GraphQLContext) => {
      if (!result.ok) return { deletedReviewId: null, userErrors: result.userErrors };
      wrote.note(result.touched);
      loaders.forgetTouched(result.touched);
      return { deletedReviewId: result.value, userErrors: [] };
    },
  }),
};
