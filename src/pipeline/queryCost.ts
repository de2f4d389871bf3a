/**
 * A cost limit that knows connections: a connection's selection costs as many times as the
 * page can hold (`first`/`last`, or the default page size), so
 * `orders(first: 100) { ... user { orders(first: 100) { ... } } }` costs about 10,000 and is
 * refused, while the 3-request query of the README costs about 100. graphql-armor's own cost
 * limit counts fields without list sizes, so this one (graphql-query-complexity, run after
 * variables are known) replaces it.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { getNamedType, GraphQLError } from 'graphql';
import type { GraphQLSchema } from 'graphql';
import { getComplexity, simpleEstimator } from 'graphql-query-complexity';
import type { ComplexityEstimator } from 'graphql-query-complexity';
import { MAX_CATEGORIES } from '../db/loaders.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../db/pagination.js';
import { ErrorCode } from '../errors.js';

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

export function queryCostPlugin(maxCost: number): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, schema }) {
          let cost: number;
          try {
            cost = queryCost(schema, document, request.variables ?? {}, request.operationName ?? undefined);
          } catch (error) {
            throw costFailure(error, maxCost);
          }
          if (cost > maxCost) {
            throw new GraphQLError(
              `The query's estimated cost ${cost} exceeds the limit of ${maxCost}: ask for smaller pages or fewer nested connections`,
              {
                extensions: { code: ErrorCode.QUERY_TOO_COMPLEX, cost, maxCost, http: { status: 400 } },
              },
            );
          }
        },
      };
    },
  };
}

/**
 * getComplexity fails on what execution would refuse anyway (variables of the wrong type) and
 * on documents too large to walk: both are the client's doing, so answer 400, not 500.
 */
function costFailure(error: unknown, maxCost: number): GraphQLError {
  const message = error instanceof Error ? error.message : String(error);
  if (/maximum allowed number of nodes/i.test(message)) {
    return new GraphQLError(`The query is too large to estimate (limit ${maxCost}): ask for fewer fields`, {
      extensions: { code: ErrorCode.QUERY_TOO_COMPLEX, maxCost, http: { status: 400 } },
    });
  }
  // Variable coercion messages name only the variable and the expected type.
  return new GraphQLError(message, { extensions: { code: ErrorCode.BAD_USER_INPUT, http: { status: 400 } } });
}
