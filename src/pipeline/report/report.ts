/**
 * The end of every operation, on every transport: errors masked by the one formatter
 * (errorMasking.ts), the DynamoDB cost in `extensions.cost.dynamodb` (capacity units only for
 * those allowed to see them: extensions.ts), the answer serialized once (answer.ts) and held to
 * the response-size ceiling (responseSize.ts), the HTTP status the errors call for, one log line
 * ("graphql request": transport, operation name, duration, cost, error count) and the metrics
 * (duration by operation label, errors by the code the client was told). What it makes is the
 * settled value (`Answer`, answer.ts) the transports write out.
 *
 * The duration means the same on every transport: from the admission of the operation (its
 * document's parse and validation) to the finished answer (execution, the cost settled, the
 * extensions added). Reading the request and writing the answer are not in it. A subscription
 * event, which is not admitted again, is timed from its execution on.
 */
import { Kind } from 'graphql';
import type { FormattedExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import type { Counter, Histogram } from 'prom-client';
import type { LogFields } from '../../graphql/context.js';
import { newRequestCost, roundUnits } from '../../db/capacity.js';
import type { RequestCost } from '../../db/capacity.js';
import type { Transport } from '../admission/admission.js';
import type { FormatError } from './errorMasking.js';
import { operationLabel } from './metricLabels.js';
import { finishOperationSpan } from './operationSpans.js';
import type { Metrics } from './metrics.js';
import type { CacheOutcome } from '../responseCache/cacheOutcome.js';
import { answerOf, jsonOf } from './answer.js';
import type { Answer } from './answer.js';
import { costExtensionsJson, explainOf, visibleCost } from './extensions.js';
import type { CostDetails } from './extensions.js';
import { responseTooLarge } from './responseSize.js';
import type { ExecutedResult } from './responseSize.js';

export type Reporter = ReturnType<typeof createReporter>;

/** Milliseconds since `startedAt` (a performance.now()), to the hundredth. */
export const msSince = (startedAt: number): number => Math.round((performance.now() - startedAt) * 100) / 100;

/** Where one operation came from, for the log line, the metrics and the span. */
export interface ReportContext {
  transport: Transport;
  operationName: string | null;
  /** When the operation reached admission, or its event its execution (performance.now()). */
  startedAt: number;
  /**
   * The execution's context, whose `logFields` its log lines carry first (graphql/context.ts: its
   * request, viewer and trace), made only when the line is written; without, the line names
   * `requestId` and `viewer` below (a refusal, a cache hit).
   */
  executionContext?: { readonly logFields: LogFields } | undefined;
  requestId?: string | undefined;
  viewer?: string | undefined;
  /** The source event of a subscription result: its line is written at debug unless it has errors. */
  event?: unknown;
}

/** What an executed operation hands the report. */
export interface Executed extends ReportContext {
  /** Its `dataJson`, when the executor wrote the answer as JSON, is written as it is. */
  result: ExecutedResult;
  cost: RequestCost;
  viewerRole: string | undefined;
  /** The JSON of `result.data`, when something already made it (the response cache's store). */
  dataJson?: string | undefined;
  cache?: CacheOutcome | undefined;
  /** `extensions.cache` (development only): what the response cache did, in the answer. */
  explain?: boolean | undefined;
  /** A subscription event: when it reached this instance (performance.now()), for the fan-out's timing. */
  arrivedAt?: number | undefined;
  /** False: no `extensions.cost` (a subscription refused while opening: its figures would tell a missing order from another's). */
  costed?: boolean | undefined;
}

/** Apollo Server's rule: a variable's value refused by graphql-js is the client's input error. */
const isBadUserInput = (error: GraphQLError): boolean => {
  const node = error.nodes?.length === 1 ? error.nodes[0] : undefined;
  if (node?.kind !== Kind.VARIABLE_DEFINITION) return false;
  const name = `Variable "$${node.variable.name.value}"`;
  return [' has invalid value', ' got invalid value ', ' of required type ', ' of non-null type '].some((part) =>
    error.message.startsWith(`${name}${part}`),
  );
};

interface HttpHead {
  status?: number | undefined;
  headers?: ReadonlyMap<string, string> | undefined;
}

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
  /**
   * The duration metric's child by operation label (one per operation the manifest knows, and
   * `other`) and the error counter's by code, each made once: prom-client's histogram makes a
   * closure for the labels on every `observe(labels, v)`, a child's observe was made with it.
   */
  const durations = new Map<string, Histogram.Internal<'operation'>>();
  const durationOf = (operationName: string | null): Histogram.Internal<'operation'> => {
    const operation = operationLabel(operationName, knownOperations);
    let child = durations.get(operation);
    if (!child) durations.set(operation, (child = metrics!.requestDuration.labels({ operation })));
    return child;
  };
  /** Codes come from the server's errors (ErrorCode, graphql-js's and Apollo's), not from clients. */
  const errorCounters = new Map<string, Counter.Internal>();
  const errorsOf = (code: string): Counter.Internal => {
    let child = errorCounters.get(code);
    if (!child) errorCounters.set(code, (child = metrics!.errors.labels({ code })));
    return child;
  };

  /** The log line, the metrics and the end of the operation span. */
  function report(
    { transport, operationName, startedAt, executionContext, requestId, viewer, event }: ReportContext,
    cost: RequestCost,
    errors: readonly GraphQLFormattedError[],
  ): void {
    const durationMs = msSince(startedAt);
    finishOperationSpan(cost, errors);
    // Built only when it is written (LOG_LEVEL at info or below), by the server's logger with the
    // fields a child logger of the request would have bound first (in the same order; pino leaves
    // out the undefined ones): no child logger is made for one line. A subscription's event is
    // written at debug unless it has errors: one event can reach thousands of subscriptions, and
    // a line each at info would cost more than their answers and flood the logs.
    const level = event !== undefined && errors.length === 0 ? 'debug' : 'info';
    if (log.isLevelEnabled(level)) {
      const logFields = executionContext?.logFields;
      log[level](
        {
          requestId: logFields ? logFields.requestId : requestId,
          viewer: logFields ? logFields.viewer : viewer,
          trace_id: logFields?.trace_id,
          span_id: logFields?.span_id,
          transport,
          operationName,
          durationMs,
          dynamodb: {
            requests: cost.requests,
            readCapacityUnits: roundUnits(cost.readCapacityUnits),
            writeCapacityUnits: roundUnits(cost.writeCapacityUnits),
            byOperation: cost.byOperation,
          },
          errors: errors.length,
        },
        'graphql request',
      );
    }
    if (!metrics) return;
    durationOf(operationName).observe(durationMs / 1000);
    for (const error of errors) {
      const code = error.extensions?.code;
      errorsOf(typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR').inc();
    }
  }

  /**
   * Errors as a client sees them, and the HTTP head they call for, as Apollo Server makes both:
   * every error gets a code (INTERNAL_SERVER_ERROR when it has none, which the formatter then
   * masks), a variable refused by graphql-js is BAD_USER_INPUT, and `extensions.http` (the status
   * and headers, the last error's status winning) leaves the error for the response.
   */
  function formatErrors(errors: readonly GraphQLError[]): { formatted: GraphQLFormattedError[]; head: HttpHead } {
    const head: { status?: number; headers: Map<string, string> } = { headers: new Map() };
    const formatted = errors.map((error) => {
      const { http, ...extensions } = error.extensions as { http?: HttpHead } & Record<string, unknown>;
      if (http?.status !== undefined) head.status = http.status;
      for (const [name, value] of http?.headers ?? []) head.headers.set(name, value);
      const code = extensions.code ?? (isBadUserInput(error) ? 'BAD_USER_INPUT' : 'INTERNAL_SERVER_ERROR');
      return formatError({ ...error.toJSON(), extensions: { ...extensions, code } }, error);
    });
    return { formatted, head };
  }

  /** A refusal before anything executed: masked, logged and counted; its status is the refusal's. */
  function refuse(errors: readonly GraphQLError[], status: number, context: ReportContext): Answer {
    const { formatted, head } = formatErrors(errors);
    const cost = newRequestCost();
    report(context, cost, formatted);
    const result: FormattedExecutionResult = { errors: formatted };
    return answerOf(
      {
        body: JSON.stringify(result),
        status: head.status ?? status,
        headers: new Map(head.headers),
        cost,
        refused: true,
        operationName: context.operationName,
      },
      result,
    );
  }

  /**
   * The last step of an executed operation: errors masked, the cost extension the viewer may see
   * (and `extensions.cache` when explained), the JSON made once and held to the size ceiling,
   * the status (Apollo's rules: the errors' `extensions.http`, 400 for an answer without `data`),
   * then the log line and the metrics.
   */
  function settle(executed: Executed): Answer {
    const shared = executed.event !== undefined ? sameAnswer(executed) : undefined;
    if (shared) {
      report(executed, executed.cost, shared.answer.errors ?? []);
      return finish(executed, shared);
    }
    const { result, cost, viewerRole } = executed;
    const { formatted, head } = result.errors?.length
      ? formatErrors(result.errors)
      : { formatted: undefined, head: { headers: undefined } as HttpHead };
    const costed = executed.costed !== false;
    const visible = costed ? visibleCost(cost, costDetails, viewerRole) : undefined;
    const explained = executed.explain && executed.cache ? { cache: explainOf(executed.cache) } : undefined;
    // The usual extensions, the cost alone, are written from their numbers.
    const onlyCost = visible !== undefined && result.extensions === undefined && explained === undefined;
    const extensions: Record<string, unknown> | undefined = !visible
      ? result.extensions
      : onlyCost
        ? { cost: visible }
        : { ...result.extensions, cost: visible, ...explained };
    let answer: FormattedExecutionResult = {
      ...(formatted ? { errors: formatted } : {}),
      ...('data' in result ? { data: result.data } : {}),
      ...(extensions ? { extensions } : {}),
    };
    let body = jsonOf(
      answer,
      formatted ? undefined : (executed.dataJson ?? result.dataJson),
      onlyCost ? costExtensionsJson(visible) : undefined,
    );
    let status = head.status ?? (formatted && result.data === undefined ? 400 : 200);
    // A UTF-16 code unit is at most 3 bytes of UTF-8: a short body needs no count.
    if (body.length * 3 > maxResponseBytes && Buffer.byteLength(body) > maxResponseBytes) {
      // Like the cost refusal: the request asked for more than the server hands out.
      answer = { errors: [responseTooLarge(maxResponseBytes)], ...(extensions ? { extensions } : {}) };
      body = JSON.stringify(answer);
      status = 400;
    }
    report(executed, cost, answer.errors ?? []);
    const made: MadeAnswer = { answer, body, status, headers: head.headers };
    // With errors, each subscription's are formatted (and an unexpected one logged) on their own, as before.
    if (executed.event !== undefined && !formatted) remember(executed, made);
    return finish(executed, made);
  }

  /** The Answer of `executed` made of `made`, and the fan-out's timing of a subscription's event. */
  function finish(executed: Executed, { answer, body, status, headers }: MadeAnswer): Answer {
    if (executed.arrivedAt !== undefined) metrics?.eventFanOut.observe((performance.now() - executed.arrivedAt) / 1000);
    return answerOf(
      {
        body,
        status,
        headers: new Map(headers),
        cost: executed.cost,
        cache: executed.cache,
        refused: false,
        event: executed.event,
        operationName: executed.operationName,
      },
      // Parsed again from the body only when a transport reads it: the object as it is now.
      answer,
    );
  }

  /**
   * A subscription event's answer, by its execution's result: the subscriptions that shared one
   * execution (sharedEvents.ts) settle one result, with one cost and one viewer, into the same
   * answer, so it is made once (its JSON, its extensions) and each subscription still reports
   * on its own (its log line, its metrics) and gets an Answer of its own. Kept while the result
   * is held.
   */
  const madeFor = new WeakMap<object, { of: Executed; made: MadeAnswer }>();
  const remember = (executed: Executed, made: MadeAnswer): void =>
    void madeFor.set(executed.result, { of: executed, made });
  /** The answer made for the same result, when everything it was made of is the same. */
  function sameAnswer(executed: Executed): MadeAnswer | undefined {
    const kept = madeFor.get(executed.result);
    if (!kept) return undefined;
    const { of } = kept;
    const same =
      of.cost === executed.cost &&
      of.viewerRole === executed.viewerRole &&
      of.costed === executed.costed &&
      of.dataJson === executed.dataJson &&
      !of.explain &&
      !executed.explain &&
      of.cache === executed.cache;
    return same ? kept.made : undefined;
  }

  return { report, refuse, settle, formatErrors };
}

/** What an answer is made of, which subscriptions that shared an execution share. */
interface MadeAnswer {
  answer: FormattedExecutionResult;
  body: string;
  status: number;
  headers: ReadonlyMap<string, string> | undefined;
}
