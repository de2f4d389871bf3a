/**
 * A cost limit that knows connections: a connection's selection costs as many times as the
 * page can hold (`first`/`last`, or the default page size), so
 * `orders(first: 100) { ... user { orders(first: 100) { ... } } }` costs about 10,000 and is
 * refused, while the 3-request query of the README costs about 100. graphql-armor's own cost
 * limit counts fields without list sizes, so this one (graphql-query-complexity, run after
 * variables are known) replaces it.
 */
import { getNamedType } from 'graphql';
import type { GraphQLSchema } from 'graphql';
import { getComplexity, simpleEstimator } from 'graphql-query-complexity';
import type { ComplexityEstimator } from 'graphql-query-complexity';
import { MAX_CATEGORIES } from '../db/loaders.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../db/pagination.js';

const connectionEstimator: ComplexityEstimator = ({ field, args, childComplexity }) => {
  if (getNamedType(field.type).name.endsWith('Connection')) {
    const size =
      typeof args.first === 'number' ? args.first : typeof args.last === 'number' ? args.last : DEFAULT_PAGE_SIZE;
    // Sizes over the cap are refused by the connection itself, with a clearer message.
    return 1 + childComplexity * Math.min(Math.max(size, 1), MAX_PAGE_SIZE);
  }
  if (field.name === 'nodes' && Array.isArray(args.ids)) return 1 + childComplexity * Math.max(args.ids.length, 1);
  // Every category may be listed, and each one's `products` is a Query of its own.
  if (field.name === 'categories') return 1 + childComplexity * MAX_CATEGORIES;
  return undefined;
};

export function queryCost(
  schema: GraphQLSchema,
  query: Parameters<typeof getComplexity>[0]['query'],
  variables: Record<string, unknown>,
  operationName?: string,
): number {
  return getComplexity({
    schema,
    query,
    variables,
    operationName,
    estimators: [connectionEstimator, simpleEstimator({ defaultComplexity: 1 })],
  });
}
