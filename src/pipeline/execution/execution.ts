/**
 * Execution, for every transport: who asks (the viewer of a bearer token), a fresh context per
 * operation (the access rules, fresh loaders and a fresh DynamoDB cost record), the executor, and
 * the operation meter around it.
 *
 * Every HTTP request gets its own context; so does every EVENT of a subscription: a subscription
 * keeps only its viewer, never a loader cache, so the second event reads the stock, versions and
 * counts as they are then, and no cache grows for as long as a subscription lives. The cost
 * record is the context's (graphql/context.ts): its client counts into it.
 *
 * The executor is chosen in one place, once: EXECUTOR's (the planned executor, or graphql-js),
 * or the one a caller brings (`execute`, a test's or the benchmark's). Whatever runs, it runs under the
 * operation's meter (meter.ts) and is handed admission's facts (the operation, the document's
 * hash, the cost estimate) instead of working them out again.
 */
import { createSourceEventStream, execute } from 'graphql';
import type { ExecutionArgs, ExecutionResult, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { Logger } from 'pino';
import { createVerifier } from '../../auth/tokens.js';
import type { Viewer } from '../../auth/tokens.js';
import { executorConfig } from '../../config/index.js';
import type { AuthConfig, ExecutorConfig } from '../../config/index.js';
import { gateReads, settled } from '../../db/capacity.js';
import type { DataSources } from '../../db/loaders.js';
import { UnauthenticatedError } from '../../errors.js';
import { createContext, viewerFrom } from '../../graphql/context.js';
import type { GraphQLContext } from '../../graphql/context.js';
import type { EventFanOut } from '../../graphql/eventFanOut.js';
import type { TraceParent } from '../../telemetry/requestTrace.js';
import { contextOf } from '../../telemetry/traceparent.js';
import { tracing } from '../../telemetry/tracing.js';
import type { AdmittedOperation } from '../admission/admission.js';
import { createPlannedExecutor } from './plan/plannedExecutor.js';
import type { PlanFallback, PlannedExecutor } from './plan/plannedExecutor.js';
import { runMetered } from './meter.js';
import type { OperationBudgets } from './meter.js';
import { finishOperationSpan, nameOperationSpan } from '../report/operationSpans.js';
import { createSharedEvents, JoinedContext, sharingKey } from './sharedEvents.js';
import type { OwnReport } from './sharedEvents.js';
import type { ExecutedResult } from '../report/responseSize.js';
import { createSubscribeReadLimiter } from './subscribeReads.js';
import type { SubscribeReadBudgets } from './subscribeReads.js';
import { mapEvents } from './mapEvents.js';

/**
 * What admission decided about the operation an executor runs, handed forward so that no
 * executor looks it up again: the operation itself and the sha256 of its document's text.
 */
export interface OperationFacts {
  operation: OperationDefinitionNode;
  /** The sha256 of the document's text. */
  hash: string;
  /** The cost estimate admission held to the cost limit. */
  cost: number;
}

/**
 * An executor: runs one operation (or one subscription event) in `args.contextValue`, whose
 * operation meter is already set (meter.ts). `facts` are admission's; an executor called without
 * them (a test's) looks them up itself. Every executor of the pipeline has this shape: graphql-js's
 * `execute`, the planned one (plan/), and any a test or the benchmark brings.
 */
export type Execute = (args: ExecutionArgs, facts?: OperationFacts) => Promise<ExecutionResult> | ExecutionResult;

/** A subscription event's trace parent: the `traceparent` the event carries (undefined while not tracing). */
const eventParent = (event: unknown): TraceParent | undefined =>
  tracing() ? { context: contextOf((event as { traceparent?: unknown } | null)?.traceparent) } : undefined;

export interface ExecutionOptions {
  schema: GraphQLSchema;
  data: DataSources;
  log: Logger;
  auth: AuthConfig;
  events: EventFanOut;
  /** What one operation may spend while it runs (meter.ts). */
  budgets: OperationBudgets;
  /** What opening subscriptions may read, per viewer and per instance (subscribeReads.ts); none: unbounded. */
  subscribeReads?: SubscribeReadBudgets | undefined;
  /** What executes operations (EXECUTOR); read from the environment when not given (default `auto`). */
  executor?: ExecutorConfig | undefined;
  /** An executor brought by the caller, used for every operation instead of EXECUTOR's (a test's: test/support/). */
  execute?: Execute | undefined;
  /** Counts an execution that fell back from the planned executor to graphql-js. */
  onFallback?: ((fallback: PlanFallback) => void) | undefined;
}

/** One event of a subscription, executed: its result, the context it ran in, and the event itself. */
export interface ExecutedEvent {
  result: ExecutionResult;
  context: GraphQLContext;
  /** The source event (an order event: SSE numbers its messages after its `seq`). */
  event: unknown;
  /** When its execution began (performance.now()): the event's duration counts from there. */
  startedAt: number;
}

export type Execution = ReturnType<typeof createExecution>;

/** True once the viewer's token has expired (a viewer without `exp` never does). */
export const hasExpired = (viewer: Viewer | null, now = Date.now()): boolean =>
  viewer?.expiresAt !== undefined && viewer.expiresAt * 1000 <= now;

/** graphql-js's executor, which needs no facts (and refuses a second argument). */
const graphqlJs: Execute = (args) => execute(args);

/** createContext's options, made once. */
const RECORDED = { recordReads: true } as const;
const NOT_RECORDED_READS = { recordReads: false } as const;

/** Admission's facts, as the executor receives them. */
const factsOf = (admitted: AdmittedOperation): OperationFacts => ({
  operation: admitted.operation,
  hash: admitted.document.hash,
  cost: admitted.cost,
});

export function createExecution({
  schema,
  data,
  log,
  auth,
  events,
  budgets,
  subscribeReads,
  executor: config,
  execute: brought,
  onFallback,
}: ExecutionOptions) {
  const verify = createVerifier(auth);
  const subscribeLimiter = subscribeReads ? createSubscribeReadLimiter(subscribeReads) : undefined;
  const shared = createSharedEvents();
  // Without settings (tests), the settings' defaults.
  const { executor: mode, maxDocuments, maxBytes } = config ?? executorConfig({});
  // Made on first use: under EXECUTOR=graphql-js it never is.
  let planned: PlannedExecutor | undefined;
  const plannedExecutor = () => (planned ??= createPlannedExecutor({ schema, maxDocuments, maxBytes, onFallback }));
  const plannedExecute: Execute = (args) => plannedExecutor().execute(args);

  /**
   * The executor of every operation, chosen here alone: the caller's, else EXECUTOR's. `auto`
   * plans each operation (plan/: breadth-first, one promise per DynamoDB round trip), and the
   * planned executor hands what it does not cover (a mutation, among others) to graphql-js,
   * counting each fall-back; `graphql-js` runs everything on graphql-js.
   */
  const executor: Execute = brought ?? (mode === 'auto' ? plannedExecute : graphqlJs);

  /**
   * A fresh context: new loaders and access rules for `viewer`. `recordReads` false where the
   * answer can be neither stored nor public (its reads are then not recorded as tags).
   */
  const context = (
    viewer: Viewer | null,
    requestId: string,
    parent?: TraceParent,
    recordReads = true,
  ): GraphQLContext =>
    createContext(data, requestId, log, viewer, events, parent, recordReads ? RECORDED : NOT_RECORDED_READS);

  const argsOf = (admitted: AdmittedOperation, contextValue: GraphQLContext, rootValue?: unknown): ExecutionArgs => ({
    schema,
    document: admitted.document.document,
    operationName: admitted.operationName,
    variableValues: admitted.variables,
    contextValue,
    rootValue,
  });

  /**
   * Executes one operation (or one subscription event) in `contextValue`, under its own meter,
   * and waits for the calls still in flight (a prefetched page), which belong to its cost.
   */
  function run(admitted: AdmittedOperation, contextValue: GraphQLContext, rootValue?: unknown) {
    const facts = factsOf(admitted);
    // `then`s rather than an async function: an execution's promises are counted (docs/performance.md).
    return runMetered(
      argsOf(admitted, contextValue, rootValue),
      budgets,
      contextValue.cost,
      (args) => executor(args, facts),
      admitted.operation,
    ).then((result) => {
      const inFlight = settled(contextValue.cost);
      return inFlight ? inFlight.then(() => result) : result;
    });
  }

  return {
    /** Plans `sources` now (the trusted documents at start-up), under `auto`. */
    precompile(sources: Iterable<string>): void {
      if (brought || mode === 'graphql-js') return;
      for (const source of sources) {
        try {
          plannedExecutor().precompile(source);
        } catch (error) {
          log.warn({ err: error }, 'a trusted document could not be planned: it will run on graphql-js');
        }
      }
    },
    /**
     * The viewer of an `Authorization` header: null without one; throws UNAUTHENTICATED (401)
     * for a refused token.
     */
    viewer: (authorization: string | undefined) => viewerFrom(authorization, verify),
    context,
    /** A query or mutation, in `contextValue`; its span is named by admission's facts. */
    execute(admitted: AdmittedOperation, contextValue: GraphQLContext): Promise<ExecutedResult> {
      nameOperationSpan(contextValue.cost, admitted);
      return run(admitted, contextValue);
    },
    /**
     * A subscription: its source stream is opened with the subscription's context (the
     * authorization check reads through it), each of whose reads takes from the viewer's and
     * the instance's subscribe-read budgets (RATE_LIMITED once one is spent; subscribeReads.ts);
     * every event then executes with a fresh context for the same viewer (once for all of this
     * viewer's subscriptions to the same operation here: sharedEvents.ts), and ends the
     * subscription with UNAUTHENTICATED once the token has expired. A refusal while opening
     * (FORBIDDEN, a missing order) is a result, not a stream.
     */
    async subscribe(
      admitted: AdmittedOperation,
      contextValue: GraphQLContext,
    ): Promise<AsyncGenerator<ExecutedEvent> | ExecutionResult> {
      const { viewer, requestId, cost } = contextValue;
      if (subscribeLimiter) gateReads(cost, () => subscribeLimiter.take(viewer?.userId ?? ''));
      // A refusal while opening is a result without a cost: its figures would tell another
      // customer's order from a missing one on DynamoDB Local. The opening's reads stay in the
      // subscription's own context, which no report reads.
      nameOperationSpan(cost, admitted);
      const opened = await createSourceEventStream(argsOf(admitted, contextValue));
      // The opening's span ends here; each event's execution has a span of its own, in the
      // trace of the write that caused the event (the event's traceparent).
      finishOperationSpan(cost, []);
      if (!(Symbol.asyncIterator in opened)) return opened;
      // mapEvents passes a client's `return()` straight to the source, which ends at once
      // even while it waits for the next event (an async generator would wait for that event).
      // The subscriptions of this viewer to this operation share each event's execution
      // (sharedEvents.ts); each keeps its own request id in its log line.
      const key = sharingKey(admitted, viewer);
      // This subscription's log fields, and its logger made once (the first time it logs) rather than once per event.
      const ownFields = { requestId, ...(viewer ? { viewer: viewer.userId } : {}) };
      let ownLog: Logger | undefined;
      const reported: OwnReport = { requestId, logFields: ownFields, log: () => (ownLog ??= log.child(ownFields)) };
      return mapEvents(opened, async (event): Promise<ExecutedEvent> => {
        // A share of a large fan-out per turn of the event loop (turnPacer.ts): this waits only
        // past the turn's share. The next event is taken only once this one is answered, so a
        // subscription's events keep their order.
        const turn = events.pacer.pace();
        if (turn) await turn;
        if (hasExpired(viewer)) throw new UnauthenticatedError('The token has expired: sign in again and resubscribe');
        const startedAt = performance.now();
        let own: GraphQLContext | undefined;
        const executed = await shared(event, key, async () => {
          // An event's answer is neither stored nor public: its reads are not recorded.
          own = context(viewer, requestId, eventParent(event), false);
          nameOperationSpan(own.cost, admitted);
          return { result: await run(admitted, own, event), context: own };
        });
        if (own) return { result: executed.result, context: own, event, startedAt };
        // The subscriptions that shared one execution go on together once it is done: paced again.
        const shares = events.pacer.pace();
        if (shares) await shares;
        return { result: executed.result, context: new JoinedContext(executed.context, reported), event, startedAt };
      });
    },
  };
}
