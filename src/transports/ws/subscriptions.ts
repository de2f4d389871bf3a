/**
 * GraphQL subscriptions over WebSocket (the graphql-ws protocol) on the same HTTP server and
 * path as queries (/graphql). The bearer token travels in `connectionParams.authorization`:
 * a refused token closes the connection (4403) before any operation runs; operations are
 * validated with the same limits as HTTP requests, refused over the same cost limit (graphql-ws
 * runs queries too, not only subscriptions), and every result, query answer or event, is held
 * to the same response-size ceiling.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { GraphQLError, specifiedRules, validate } from 'graphql';
import type { GraphQLSchema, ValidationRule } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { newRequestCost } from '../../db/capacity.js';
import type { RequestCost } from '../../db/capacity.js';
import type { GraphQLContext } from '../../graphql/context.js';
import { costRefusal } from '../../pipeline/queryCost.js';
import { withinResponseSize } from '../../pipeline/responseSize.js';

export interface SubscriptionOptions {
  httpServer: http.Server;
  schema: GraphQLSchema;
  validationRules: readonly ValidationRule[];
  contextFor: (authorization: string | undefined, requestId: string, cost: RequestCost) => Promise<GraphQLContext>;
  log: Logger;
  /** The cost limit and response-size ceiling of the HTTP server (config limits). */
  maxCost: number;
  maxResponseBytes: number;
}

const authorizationOf = (params: Readonly<Record<string, unknown>> | undefined): string | undefined => {
  const value = params?.authorization ?? params?.Authorization;
  return typeof value === 'string' ? value : undefined;
};

export function serveSubscriptions({
  httpServer,
  schema,
  validationRules,
  contextFor,
  log,
  maxCost,
  maxResponseBytes,
}: SubscriptionOptions) {
  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql' });
  const rules = [...specifiedRules, ...validationRules];
  return useServer(
    {
      schema,
      validate: (target, document) => validate(target, document, rules),
      onSubscribe: (_ctx, _id, payload) => {
        const refusal = costRefusal(
          schema,
          payload.query,
          payload.variables ?? {},
          payload.operationName ?? undefined,
          maxCost,
        );
        return refusal ? [refusal] : undefined;
      },
      onNext: (_ctx, _id, _payload, _args, result) => {
        const bounded = withinResponseSize(result, maxResponseBytes);
        if (bounded === result) return undefined;
        const [error] = bounded.errors ?? [];
        return { errors: [new GraphQLError(error?.message ?? '', { extensions: error?.extensions })] };
      },
      onConnect: async (ctx) => {
        try {
          await contextFor(authorizationOf(ctx.connectionParams), randomUUID(), newRequestCost());
          return true;
        } catch {
          return false; // graphql-ws closes with 4403 Forbidden
        }
      },
      context: (ctx) => contextFor(authorizationOf(ctx.connectionParams), randomUUID(), newRequestCost()),
      onError: (_ctx, _id, _payload, errors) => {
        log.debug({ errors: errors.map((error) => error.message) }, 'subscription refused');
      },
    },
    wsServer,
  );
}
