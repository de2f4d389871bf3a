/**
 * Puts the request's DynamoDB cost into `extensions.cost.dynamodb` of every response and logs
 * one line per request: operation name, duration, cost.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { roundUnits } from '../db/capacity.js';
import type { GraphQLContext } from '../graphql/context.js';

export function costPlugin(): ApolloServerPlugin<GraphQLContext> {
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
            result.extensions = { ...result.extensions, cost: { dynamodb } };
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
