/**
 * The end of every operation, on every transport: errors masked by the one formatter
 * (errorMasking.ts), the DynamoDB cost in `extensions.cost.dynamodb`, one log line
 * ("graphql request": transport, operation name, duration, cost, error count) and the metrics
 * (duration by operation, errors by the code the client was told).
 */
import type { ExecutionResult, FormattedExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { roundUnits } from '../db/capacity.js';
import type { RequestCost } from '../db/capacity.js';
import type { Transport } from './admission.js';
import type { FormatError } from './errorMasking.js';
import type { Measurement } from './execution.js';
import type { Metrics } from './metrics.js';

export interface OperationOutcome {
  transport: Transport;
  operationName: string | null;
  durationMs: number;
  cost: RequestCost;
  /** As the client sees them (formatted). */
  errors: readonly GraphQLFormattedError[];
  /** The request's own logger (with requestId and viewer), else the server's. */
  log?: Logger | undefined;
}

export interface CostExtension {
  dynamodb: { requests: number; readCapacityUnits: number; writeCapacityUnits: number };
}

export const costExtension = (cost: RequestCost): CostExtension => ({
  dynamodb: {
    requests: cost.requests,
    readCapacityUnits: roundUnits(cost.readCapacityUnits),
    writeCapacityUnits: roundUnits(cost.writeCapacityUnits),
  },
});

export type Reporter = ReturnType<typeof createReporter>;

export function createReporter({
  log,
  metrics,
  formatError,
}: {
  log: Logger;
  metrics?: Metrics | undefined;
  formatError: FormatError;
}) {
  function report({
    transport,
    operationName,
    durationMs,
    cost,
    errors,
    log: requestLog = log,
  }: OperationOutcome): void {
    requestLog.info(
      {
        transport,
        operationName,
        durationMs,
        dynamodb: { ...costExtension(cost).dynamodb, byOperation: cost.byOperation },
        errors: errors.length,
      },
      'graphql request',
    );
    if (!metrics) return;
    metrics.requestDuration.observe({ operation: operationName ?? 'anonymous' }, durationMs / 1000);
    for (const error of errors) {
      const code = error.extensions?.code;
      metrics.errors.inc({ code: typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR' });
    }
  }

  // `extensions.http` tells Apollo the status; it is not for clients.
  const formatErrors = (errors: readonly GraphQLError[]): GraphQLFormattedError[] =>
    errors.map((error) => {
      const { http: _http, ...extensions } = error.extensions;
      const json = error.toJSON();
      return formatError({ ...json, extensions }, error);
    });

  return {
    report,
    formatErrors,
    /** A result made outside Apollo (WebSocket): masked, costed, logged and counted. */
    finishResult(
      result: ExecutionResult,
      context: {
        transport: Transport;
        operationName: string | null;
        measurement: Measurement | undefined;
        log?: Logger;
      },
    ): FormattedExecutionResult {
      const { errors, ...rest } = result;
      const formatted = errors ? formatErrors(errors) : undefined;
      const cost = context.measurement?.cost ?? {
        requests: 0,
        readCapacityUnits: 0,
        writeCapacityUnits: 0,
        byOperation: {},
      };
      report({
        transport: context.transport,
        operationName: context.operationName,
        durationMs: context.measurement?.durationMs ?? 0,
        cost,
        errors: formatted ?? [],
        log: context.log,
      });
      return {
        ...rest,
        ...(formatted ? { errors: formatted } : {}),
        ...(context.measurement ? { extensions: { ...rest.extensions, cost: costExtension(cost) } } : {}),
      };
    },
    /** A refusal or failure without a result (WebSocket `error` message): masked, logged and counted. */
    finishErrors(
      errors: readonly GraphQLError[],
      context: { transport: Transport; operationName: string | null; log?: Logger },
    ): GraphQLFormattedError[] {
      const formatted = formatErrors(errors);
      report({
        ...context,
        durationMs: 0,
        cost: { requests: 0, readCapacityUnits: 0, writeCapacityUnits: 0, byOperation: {} },
        errors: formatted,
      });
      return formatted;
    },
  };
}
