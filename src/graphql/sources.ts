/**
 * What fields read (reads.ts), one source per access pattern of the request's loaders, with the
 * access rules of src/auth/access.ts where a read needs them. Each reads a key at a time through
 * the loaders (graphql-js) or a round's keys at once (the planned executor): the same loaders, the
 * same requests, the same caches.
 */
import type { ItemRef } from '../auth/access.js';
import { mapped } from '../db/continuation.js';
import type { Continuation } from '../db/continuation.js';
import type { Loaders } from '../db/loaders.js';
import type { NodeModel, ProductRatingModel } from '../table/models.js';
import type { GraphQLContext } from './context.js';
import type { Source } from './reads.js';

/** One of the request's loaders, as a source. */
function loaderSource<K, V>(
  name: string,
  loaderOf: (loaders: Loaders) => {
    load(key: K): Promise<V>;
    readAll<R>(keys: readonly K[], then: Continuation<V[], R>): R | Promise<R>;
  },
): Source<K, V> {
  return {
    name,
    one: ({ loaders }, key) => loaderOf(loaders).load(key),
    all: ({ loaders }, keys, then) => loaderOf(loaders).readAll(keys, then),
  };
}

type Found = NodeModel | ProductRatingModel | null;

/**
 * Nodes by kind and id under the access rules: one node, or a list of them (`nodes(ids:)`); and
 * a product's rating (`{ kind: 'ProductRating', id: productId }`). One source for every point
 * read, whatever the field, so that what a round reads by key goes in one BatchGetItem (as the
 * items loader batches a tick's loads under graphql-js).
 */
export const nodeSource: Source<ItemRef | readonly ItemRef[], Found | Found[]> = {
  name: 'node',
  one: ({ access, loaders }: GraphQLContext, key) =>
    isList(key) ? Promise.all(key.map((ref) => readOne(access, loaders, ref))) : readOne(access, loaders, key),
  all: ({ access }, keys, then) => {
    const flat = keys.flatMap((key) => (isList(key) ? key : [key]));
    return access.items(
      flat,
      mapped(then, (found: Found[]) => {
        let next = 0;
        return keys.map((key) => (isList(key) ? key.map(() => found[next++] ?? null) : (found[next++] ?? null)));
      }),
    );
  },
};

const readOne = (access: GraphQLContext['access'], loaders: Loaders, ref: ItemRef): Promise<Found> =>
  ref.kind === 'ProductRating' ? loaders.rating(ref.id) : access.node(ref.kind, ref.id);

const isList = (key: ItemRef | readonly ItemRef[]): key is readonly ItemRef[] => Array.isArray(key);

/** A user by email (GSI1), for viewers who may see them. */
export const userByEmailSource: Source<string, Found> = {
  name: 'userByEmail',
  one: ({ access }, email) => access.userByEmail(email),
  all: ({ access }, emails, then) => access.usersByEmail(emails, then),
};

/** A page of one user's orders. */
export const ordersPageSource = loaderSource('ordersPage', (loaders) => loaders.ordersPages);
/** A page of the shop's orders (GSI2, its shards merged). */
export const shopOrdersPageSource = loaderSource('shopOrdersPage', (loaders) => loaders.shopOrdersPages);
/** A page of a product listing. */
export const productsPageSource = loaderSource('productsPage', (loaders) => loaders.productsPages);
/** Every category counter. */
export const categoriesSource = loaderSource('categories', (loaders) => loaders.categories);
/** One category's product count. */
export const categoryCountSource = loaderSource('categoryCount', (loaders) => loaders.categoryCounts);
/** A page of a product's reviews. */
export const reviewsPageSource = loaderSource('reviewsPage', (loaders) => loaders.reviewsPages);
