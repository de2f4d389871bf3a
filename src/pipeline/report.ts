/**
 * The end of every operation, on every transport: errors masked by the one formatter
 * (errorMasking.ts), the DynamoDB cost in `extensions.cost.dynamodb` (capacity units only for
 * those allowed to see them), the response-size ceiling (responseSize.ts), one log line
 * ("graphql request": transport, operation name, duration, cost, error count) and the metrics
 * (duration by operation label, errors by the code the client was told).
 *
 * The duration means the same on every transport: from the admission of the operation (its
 * document's parse and validation) to the finished result (execution, the cost settled, the
 * extensions added). Reading the request, verifying the token and writing the answer are not in
 * it. A subscription event, which is not admitted again, is timed from its execution on.
 */
import type { ExecutionResult, FormattedExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { newRequestCost, roundUnits } from '../db/capacity.js';
import type { RequestCost } from '../db/capacity.js';
import type { Transport } from './admission.js';
import type { FormatError } from './errorMasking.js';
import type { Measurement } from './execution.js';
import { operationLabel } from './metricLabels.js';
import { finishOperationSpan } from './operationSpans.js';
import type { Metrics } from './metrics.js';
import { withinResponseSize } from './responseSize.js';
import type { SizedResult } from './responseSize.js';

/**
 * COST_DETAILS: who sees capacity units. They depend on the data read, not only on the query
 * (DynamoDB reports 0 for a missing key and 0.5-1 for another user's item that access control
 * then hides), so they would tell "not yours" from "missing"; `requests` depends on the query's
 * shape alone and is shown to everyone.
 */
export type CostDetails = 'admin' | 'all';

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

/** The cost extension as `viewerRole` may see it (the log line always has it in full). */
export const visibleCost = (
  cost: RequestCost,
  costDetails: CostDetails,
  viewerRole: string | undefined,
): CostExtension | { dynamodb: { requests: number } } =>
  costDetails === 'all' || viewerRole === 'admin' ? costExtension(cost) : { dynamodb: { requests: cost.requests } };

export type Reporter = ReturnType<typeof createReporter>;

/** Milliseconds since `startedAt` (a performance.now()), to the hundredth. */
export const msSince = (startedAt: number): number => Math.round((performance.now() - startedAt) * 100) / 100;

export function createReporter({
  log,
  metrics,
  formatError,
  costDetails,
  maxResponseBytes,
  knownOperations,
}: {
  log: Logger;
  metrics?: Metrics | undefined;
  formatError: FormatError;
  costDetails: CostDetails;
  maxResponseBytes: number;
  /** Operation names that may become metric labels (the manifest's); any other is `other`. */
  knownOperations: ReadonlySet<string>;
}) {
  function report({
    transport,
    operationName,
    durationMs,
    cost,
    errors,
    log: requestLog = log,
  }: OperationOutcome): void {
    finishOperationSpan(cost, errors);
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
    metrics.requestDuration.observe({ operation: operationLabel(operationName, knownOperations) }, durationMs / 1000);
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

  /**
   * The last step before a result leaves: the cost extension the viewer may see, then the
   * size ceiling. `tooLarge` tells the HTTP transports to answer 400.
   */
  const finalize = <T extends SizedResult>(
    result: T,
    cost: RequestCost | undefined,
    viewerRole: string | undefined,
  ): { result: T | SizedResult; tooLarge: boolean } => {
    const costed = cost
      ? { ...result, extensions: { ...result.extensions, cost: visibleCost(cost, costDetails, viewerRole) } }
      : result;
    const bounded = withinResponseSize(costed, maxResponseBytes);
    return { result: bounded, tooLarge: bounded !== costed };
  };

  return {
    report,
    formatErrors,
    finalize,
    /** A result made outside Apollo (WebSocket): masked, costed, logged and counted. */
    finishResult(
      result: ExecutionResult,
      context: {
        transport: Transport;
        operationName: string | null;
        measurement: Measurement | undefined;
        viewerRole: string | undefined;
        log?: Logger;
        /** When the operation reached admission (performance.now()); unset for a subscription event. */
        startedAt?: number | undefined;
      },
    ): FormattedExecutionResult {
      const { errors, ...rest } = result;
      const formatted = errors ? formatErrors(errors) : undefined;
      const cost = context.measurement?.cost ?? newRequestCost();
      report({
        transport: context.transport,
        operationName: context.operationName,
        durationMs:
          context.startedAt !== undefined ? msSince(context.startedAt) : (context.measurement?.durationMs ?? 0),
        cost,
        errors: formatted ?? [],
        log: context.log,
      });
      const { result: finished } = finalize(
        { ...rest, ...(formatted ? { errors: formatted } : {}) },
        context.measurement ? cost : undefined,
        context.viewerRole,
      );
      return finished as FormattedExecutionResult;
    },
    /** A refusal or failure without a result (WebSocket `error` message): masked, logged and counted. */
    finishErrors(
      errors: readonly GraphQLError[],
      context: { transport: Transport; operationName: string | null; log?: Logger; startedAt?: number | undefined },
    ): GraphQLFormattedError[] {
      const { startedAt, ...rest } = context;
      const formatted = formatErrors(errors);
      report({
        ...rest,
        durationMs: startedAt !== undefined ? msSince(startedAt) : 0,
        cost: newRequestCost(),
        errors: formatted,
      });
      return formatted;
    },
  };
}
