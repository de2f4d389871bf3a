/**
 * Puts the request's DynamoDB cost into `extensions.cost.dynamodb` of every response and logs
 * one line per request: operation name, duration, cost (always in full).
 *
 * Capacity units depend on the data read, not only on the query: DynamoDB Local reports 0 for
 * a missing key and 0.5-1 for another user's order that access control then hides, so the
 * units would tell "not yours" from "missing". They go to admins only (or to everyone with
 * COST_DETAILS=all); other callers see `requests`, which the query's shape decides.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { roundUnits } from '../db/capacity.js';
import type { GraphQLContext } from '../graphql/context.js';

export function costPlugin(costDetails: 'admin' | 'all' = 'admin'): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse({ response, contextValue, operationName, errors }) {
          const { cost, log } = contextValue;
          const dynamodb = {
            requests: cost.requests,
            readCapacityUnits: roundUnits(cost.readCapacityUnits),
            writeCapacityUnits: roundUnits(cost.writeCapacityUnits),
          };
          if (response.body.kind === 'single') {
            const result = response.body.singleResult;
            // contextValue is incomplete when the context factory itself failed (a refused token).
            const admin = contextValue.access?.viewer?.role === 'admin';
            const shown = costDetails === 'all' || admin ? dynamodb : { requests: dynamodb.requests };
            result.extensions = { ...result.extensions, cost: { dynamodb: shown } };
          }
          log.info(
            {
              operationName: operationName ?? null,
              durationMs: Math.round((performance.now() - started) * 100) / 100,
              dynamodb: { ...dynamodb, byOperation: cost.byOperation },
              errors: errors?.length ?? 0,
            },
            'graphql request',
          );
        },
      };
    },
  };
}
