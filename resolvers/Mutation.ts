import type { Access } from '../src/auth/access.js';
import type { Loaders } from '../src/db/loaders.js';
import type { MutationResolvers } from '../src/generated/resolvers-types.js';
import { tagsOfWrite, tagsOfWritten } from '../src/table/dependencies.js';
import type { ItemKey } from '../src/table/keys.js';
import type { NodeModel } from '../src/table/models.js';
import { cancelOrder, updateOrderStatus } from '../src/writes/orderStatus.js';
import { placeOrder } from '../src/writes/placeOrder.js';
import { createProduct, updateProduct } from '../src/writes/products.js';
import { addReview, deleteReview, updateReview } from '../src/writes/reviews.js';
import { createUser, updateUser } from '../src/writes/users.js';
import type { WriteResult } from '../src/writes/userErrors.js';

/**
 * Read-your-writes inside the request: what the write touched is dropped from the request's
 * loaders (a product's stock, the user's orderCount, pages listing them), and the written
 * entity is primed, so `user { ... }` on the payload needs no read.
 */
function remember<T extends NodeModel>(loaders: Loaders, wrote: Set<string>, result: WriteResult<T>): T | null {
  if (!result.ok) return null;
  noteWrites(wrote, result.touched, result.value);
  loaders.forgetTouched(result.touched);
  loaders.prime(result.value);
  return result.value;
}

/**
 * The dependency tags of what a write touched, for the response cache to evict before the
 * answer leaves (the stream evicts them everywhere else), and those of the written node as it
 * is now: a product coming back in stock joins its category's pages, which did not list it.
 */
function noteWrites(wrote: Set<string>, touched: readonly ItemKey[], value?: NodeModel): void {
  for (const key of touched) for (const tag of tagsOfWrite(key)) wrote.add(tag);
  if (value) for (const tag of tagsOfWritten(value)) wrote.add(tag);
}

const errorsOf = <T>(result: WriteResult<T>) => (result.ok ? [] : result.userErrors);

/** The viewer as the writer of a review: signed in (UNAUTHENTICATED otherwise), an admin or not. */
const reviewer = (access: Access) => {
  const viewer = access.requireViewer();
  return { userId: viewer.userId, admin: viewer.role === 'admin' };
};

export const Mutation: MutationResolvers = {
  createUser: async (_, { input }, { access, data, loaders, wrote }) => {
    const { userId, verifiedEmail } = access.profileOwner(input.userId);
    const result = await createUser(data, { ...input, userId }, { verifiedEmail });
    return { user: remember(loaders, wrote, result), userErrors: errorsOf(result) };
  },
  updateUser: async (_, { input }, { access, data, loaders, wrote }) => {
    access.requireSelfOrAdmin(input.userId, 'edit a profile');
    const result = await updateUser(data, input);
    return { user: remember(loaders, wrote, result), userErrors: errorsOf(result) };
  },
  createProduct: async (_, { input }, { access, data, loaders, wrote }) => {
    access.requireAdmin('create products');
    const result = await createProduct(data, input);
    return { product: remember(loaders, wrote, result), userErrors: errorsOf(result) };
  },
  updateProduct: async (_, { input }, { access, data, loaders, wrote }) => {
    access.requireAdmin('edit products');
    const result = await updateProduct(data, input);
    return { product: remember(loaders, wrote, result), userErrors: errorsOf(result) };
  },
  placeOrder: async (_, { input }, { access, data, loaders, wrote }) => {
    access.requireSelfOrAdmin(input.userId, 'place orders');
    const result = await placeOrder(data, input);
    if (!result.ok) return { order: null, replayed: false, userErrors: result.userErrors };
    noteWrites(wrote, result.touched, result.value.order);
    loaders.forgetTouched(result.touched);
    loaders.prime(result.value.order);
    return { order: result.value.order, replayed: result.value.replayed, userErrors: [] };
  },
  cancelOrder: async (_, { input }, { access, data, loaders, wrote }) => {
    access.requireViewer();
    // Another customer's order reads as NOT_FOUND, exactly like an order that does not exist.
    const result = await cancelOrder(data, input, (order) => access.owns(order.userId));
    return { order: remember(loaders, wrote, result), userErrors: errorsOf(result) };
  },
  updateOrderStatus: async (_, { input }, { access, data, loaders, wrote }) => {
    access.requireAdmin("change an order's status");
    const result = await updateOrderStatus(data, input);
    return { order: remember(loaders, wrote, result), userErrors: errorsOf(result) };
  },
  addReview: async (_, { input }, { access, data, loaders, wrote }) => {
    const result = await addReview(data, reviewer(access), input);
    return { review: remember(loaders, wrote, result), userErrors: errorsOf(result) };
  },
  updateReview: async (_, { input }, { access, data, loaders, wrote }) => {
    // Another customer's review reads as NOT_FOUND, exactly like a review that does not exist.
    const result = await updateReview(data, reviewer(access), input);
    return { review: remember(loaders, wrote, result), userErrors: errorsOf(result) };
  },
  deleteReview: async (_, { input }, { access, data, loaders, wrote }) => {
    const result = await deleteReview(data, reviewer(access), input);
    if (!result.ok) return { deletedReviewId: null, userErrors: result.userErrors };
    noteWrites(wrote, result.touched);
    loaders.forgetTouched(result.touched);
    return { deletedReviewId: result.value, userErrors: [] };
  },
};
