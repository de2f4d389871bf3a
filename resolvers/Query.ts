import type { Loaders } from '../src/db/loaders.js';
import { BadUserInputError } from '../src/errors.js';
import type { QueryResolvers } from '../src/generated/resolvers-types.js';
import { fromGlobalId } from '../src/globalId.js';
import { assertCategory, assertId, normalizeEmail } from '../src/table/keys.js';

/** `nodes(ids:)` reads at most this many ids: one BatchGetItem's worth. */
export const MAX_NODE_IDS = 100;

export const Query: QueryResolvers = {
  node: (_, { id }, { loaders }) => loadNode(loaders, id, 'id'),
  nodes: (_, { ids }, { loaders }) => {
    if (ids.length > MAX_NODE_IDS) throw new BadUserInputError(`ids may hold at most ${MAX_NODE_IDS} ids`, 'ids');
    return Promise.all(ids.map((id) => loadNode(loaders, id, 'ids')));
  },
  user: (_, { userId }, { loaders }) => loaders.user(assertId(userId, 'userId')),
  userByEmail: (_, { email }, { loaders }) => loaders.userByEmail.load(normalizeEmail(email)),
  order: (_, { orderId }, { loaders }) => loaders.order(assertId(orderId, 'orderId')),
  product: (_, { productId }, { loaders }) => loaders.product(assertId(productId, 'productId')),
  products: (_, { category, ...args }, { loaders }) =>
    loaders.productsPages.load({ category: assertCategory(category), args }),
};

function loadNode(loaders: Loaders, globalId: string, argumentName: string) {
  const { type, id } = fromGlobalId(globalId, argumentName);
  switch (type) {
    case 'User':
      return loaders.user(id);
    case 'Order':
      return loaders.order(id);
    case 'Product':
      return loaders.product(id);
  }
}
