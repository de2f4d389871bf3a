/**
 * Execution contexts, built in one place for every transport: who asks (the viewer of a
 * bearer token), the access rules, fresh loaders and a fresh DynamoDB cost record.
 *
 * Every HTTP request gets its own; so does every EVENT of a subscription: a subscription keeps
 * only its viewer, never a loader cache, so the second event reads the stock, versions and
 * counts as they are then, and no cache grows for as long as a subscription lives. The cost
 * record is the context's (graphql/context.ts): its client counts into it. `measured` runs an
 * execution, waits for its calls still in flight and remembers what it cost for the report.
 */
import { createSourceEventStream, execute, getOperationAST, OperationTypeNode } from 'graphql';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { mapAsyncIterator } from 'graphql/execution/mapAsyncIterator.js';
import type { Logger } from 'pino';
import { createVerifier } from '../auth/tokens.js';
import type { Viewer } from '../auth/tokens.js';
import { executorConfig } from '../config/index.js';
import type { AuthConfig, ExecutorConfig } from '../config/index.js';
import { gateReads, settled } from '../db/capacity.js';
import type { RequestCost } from '../db/capacity.js';
import type { DataSources } from '../db/loaders.js';
import { UnauthenticatedError } from '../errors.js';
import { createContext, viewerFrom } from '../graphql/context.js';
import type { GraphQLContext } from '../graphql/context.js';
import type { EventFanOut } from '../graphql/eventFanOut.js';
import { createCompiledExecutor } from './compiledExecutor.js';
import type { Execute, FallbackClass } from './compiledExecutor.js';
import { createPlannedExecutor } from './plan/plannedExecutor.js';
import type { PlanFallback } from './plan/plannedExecutor.js';
import { createDifferentialExecutor } from './differentialExecutor.js';
import type { AnswerPart } from './differentialExecutor.js';
import { DynamoTape } from './dynamoTape.js';
import { runMetered } from './meter.js';
import type { OperationBudgets } from './meter.js';
import { queryCost } from './queryCost.js';
import { createSubscribeReadLimiter } from './subscribeReads.js';
import type { SubscribeReadBudgets } from './subscribeReads.js';
import type { ResponseCache } from './responseCache/responseCache.js';
import type { TraceParent } from '../telemetry/requestTrace.js';
import { contextOf } from '../telemetry/traceparent.js';
import { tracing } from '../telemetry/tracing.js';
import { finishOperationSpan, nameOperationSpan } from './operationSpans.js';
import type { DescribeDocument } from './operationSpans.js';

/** A subscription event's trace parent: the `traceparent` the event carries (undefined while not tracing). */
const eventParent = (event: unknown): TraceParent | undefined =>
  tracing() ? { context: contextOf((event as { traceparent?: unknown } | null)?.traceparent) } : undefined;

export interface ExecutionOptions {
  data: DataSources;
  log: Logger;
  auth: AuthConfig;
  events: EventFanOut;
  /** The admitted document's hash and whether it is persisted: the operation span's name (operationSpans.ts). */
  describe?: DescribeDocument;
  /** What one operation may spend while it runs (meter.ts). */
  budgets: OperationBudgets;
  /** What opening subscriptions may read, per viewer and per instance (subscribeReads.ts); none: unbounded. */
  subscribeReads?: SubscribeReadBudgets | undefined;
  /** The response cache every execution goes through (responseCache/); none: every query executes. */
  cache?: ResponseCache | undefined;
  /** What executes operations (EXECUTOR); read from the environment when not given (default `auto`). */
  executor?: ExecutorConfig | undefined;
  /** Counts an execution that fell back from the planned (or compiled) executor to graphql-js. */
  onFallback?: ((fallback: PlanFallback | FallbackClass) => void) | undefined;
  /** Counts an operation the two executors answered differently (EXECUTOR=differential). */
  onDifference?: ((part: AnswerPart) => void) | undefined;
}

/** What one execution cost, for the log line, the metrics and `extensions.cost`. */
export interface Measurement {
  cost: RequestCost;
  durationMs: number;
}

export type Execution = ReturnType<typeof createExecution>;

/**
 * `EXECUTOR=auto`: compiled execution for a query whose estimated cost (the cost limit's
 * estimate, remembered per document, so this is a look-up) reaches `minCost`, graphql-js for
 * the rest. Compiling removes graphql-js's per-field work (a resolve info, the arguments, a
 * promise per async field), which is most of a page of many fields and little of a small
 * document, where graphql-jit's own per-execution work measured dearer. Mutations and
 * subscription events stay on graphql-js: they are small, and a mutation measured dearer compiled.
 */
export function prefersCompiled(args: ExecutionArgs, minCost: number): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== OperationTypeNode.QUERY) return false;
  try {
    const variables = args.variableValues ?? {};
    return queryCost(args.schema, args.document, variables, operation.name?.value ?? undefined) >= minCost;
  } catch {
    // Variables that do not coerce: graphql-js refuses them in its own words.
    return false;
  }
}

/** True once the viewer's token has expired (a viewer without `exp` never does). */
export const hasExpired = (viewer: Viewer | null, now = Date.now()): boolean =>
  viewer?.expiresAt !== undefined && viewer.expiresAt * 1000 <= now;

export function createExecution({
  data,
  log,
  auth,
  events,
  budgets,
  subscribeReads,
  cache,
  executor: config,
  onFallback,
  onDifference,
  describe = () => ({ hash: undefined, persisted: false }),
}: ExecutionOptions) {
  const verify = createVerifier(auth);
  const subscribeLimiter = subscribeReads ? createSubscribeReadLimiter(subscribeReads) : undefined;
  // Without settings (tests), the settings' defaults.
  const settings = config ?? executorConfig({});
  const { executor: mode, minCost } = settings;
  // The schema is the one every execution is given: the compiled executor binds itself to the first.
  let compiled: ReturnType<typeof createCompiledExecutor> | undefined;
  const compiledFor = (args: Pick<ExecutionArgs, 'schema'>) =>
    (compiled ??= createCompiledExecutor({
      schema: args.schema,
      maxDocuments: settings.maxDocuments,
      maxBytes: settings.maxBytes,
      onFallback,
    }));
  // The differential executor's record of each context's DynamoDB calls, by its cost record (Apollo
  // executes a shallow copy of the context it was given; the copy shares the record).
  const tapes = new WeakMap<object, DynamoTape>();
  const measurements = new WeakMap<object, Measurement>();
  // The event each subscription result was executed for (SSE numbers its messages after it).
  const sources = new WeakMap<object, unknown>();

  /** A fresh context: new loaders and access rules for `viewer`. */
  const context = (viewer: Viewer | null, requestId: string, parent?: TraceParent): GraphQLContext => {
    if (mode !== 'differential') return createContext(data, requestId, log, viewer, events, parent);
    const tape = new DynamoTape();
    const recorded = { ...data, dynamo: { client: data.dynamo.client, doc: tape.recorder(data.dynamo.doc) } };
    const value = createContext(recorded, requestId, log, viewer, events, parent);
    tapes.set(value.cost, tape);
    return value;
  };

  /** A fresh context for `primary`'s viewer whose client replays `primary`'s DynamoDB calls. */
  const replay = (primary: GraphQLContext) => {
    const tape = tapes.get(primary.cost);
    if (!tape) return undefined;
    const replaying = { ...data, dynamo: { client: data.dynamo.client, doc: tape.replayer(data.dynamo.doc) } };
    return {
      tape,
      context: createContext(replaying, primary.requestId, primary.log, primary.viewer, events, undefined, {
        traced: false,
      }),
    };
  };

  let planned: ReturnType<typeof createPlannedExecutor> | undefined;
  const plannedFor = (args: Pick<ExecutionArgs, 'schema'>) =>
    (planned ??= createPlannedExecutor({
      schema: args.schema,
      maxDocuments: settings.maxDocuments,
      maxBytes: settings.maxBytes,
      onFallback,
    }));
  const compiledExecute: Execute = (args) => compiledFor(args).execute(args);
  const plannedExecute: Execute = (args) => plannedFor(args).execute(args);
  /** The executor of this operation: `auto` plans it (src/pipeline/plan/, graphql-js for what it leaves). */
  const executorFor = (args: ExecutionArgs): Execute => {
    if (mode === 'compiled') return prefersCompiled(args, minCost) ? compiledExecute : execute;
    if (mode === 'auto') return plannedExecute;
    return execute;
  };
  const differential = createDifferentialExecutor({
    primary: plannedExecute,
    reran: (result) => planned?.reran(result) ?? false,
    oracle: execute,
    budgets,
    replay,
    log,
    onDifference,
  });

  /**
   * Executes one operation (or one subscription event) in the cost record it is called in:
   * the one executor of every transport (Apollo calls it through its gateway interface,
   * apollo.ts), so the executor (EXECUTOR: auto, graphql-js, compiled, or both compared) is chosen
   * here alone. Every execution runs under its own meter (meter.ts), whichever executor runs it.
   */
  const execute_ = (args: ExecutionArgs): Promise<ExecutionResult> => {
    if (mode === 'differential') return differential(args);
    const cost = (args.contextValue as GraphQLContext).cost;
    return runMetered(args, budgets, cost, executorFor(args));
  };
  /** `explain` asks the cache for `extensions.cache` (development only). */
  const run = (args: ExecutionArgs, explain = false): Promise<ExecutionResult> | ExecutionResult => {
    nameOperationSpan(args, describe);
    return cache ? cache.execute(args, execute_, explain) : execute_(args);
  };

  /**
   * Runs the execution of `args` and remembers what it cost (its context's record) next to its
   * result. A `then` rather than an async function: an execution's promises are counted
   * (docs/performance.md).
   */
  function measured(args: ExecutionArgs): Promise<ExecutionResult> {
    const { cost } = args.contextValue as GraphQLContext;
    const started = performance.now();
    return Promise.resolve(run(args)).then((result) => {
      const remember = () => {
        measurements.set(result, { cost, durationMs: Math.round((performance.now() - started) * 100) / 100 });
        return result;
      };
      // Calls still in flight (a prefetched page) belong to this result's cost.
      const inFlight = settled(cost);
      return inFlight ? inFlight.then(remember) : remember();
    });
  }

  return {
    /**
     * Compiles `sources` now (the trusted documents at start-up), when an executor compiles:
     * under `auto`, only their queries (a mutation or a subscription event never runs compiled).
     */
    precompile(schema: ExecutionArgs['schema'], sources: Iterable<string>): void {
      if (mode === 'graphql-js') return;
      const precompile =
        mode === 'compiled'
          ? (source: string) =>
              compiledFor({ schema }).precompile(source, (operation) => operation.operation === OperationTypeNode.QUERY)
          : (source: string) => plannedFor({ schema }).precompile(source);
      for (const source of sources) {
        try {
          precompile(source);
        } catch (error) {
          log.warn({ err: error }, 'a trusted document could not be compiled: it will run on graphql-js');
        }
      }
    },
    /**
     * The viewer of an `Authorization` header: null without one; throws UNAUTHENTICATED (401)
     * for a refused token.
     */
    viewer: (authorization: string | undefined) => viewerFrom(authorization, verify),
    context,
    run,
    /** A query or mutation (WebSocket), measured in its context's cost record. */
    execute: measured,
    /**
     * A subscription: its source stream is opened with the subscription's context (the
     * authorization check reads through it), each of whose reads takes from the viewer's and
     * the instance's subscribe-read budgets (RATE_LIMITED once one is spent; subscribeReads.ts);
     * every event then executes with a fresh context for the same viewer, and ends the
     * subscription with UNAUTHENTICATED once the token has expired.
     */
    async subscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
      const { viewer, requestId, cost } = args.contextValue as GraphQLContext;
      if (subscribeLimiter) gateReads(cost, () => subscribeLimiter.take(viewer?.userId ?? ''));
      // A refusal while opening (FORBIDDEN, a missing order) is a result without a cost: its
      // figures would tell another customer's order from a missing one on DynamoDB Local. The
      // opening's reads stay in the subscription's own context, which no report reads.
      nameOperationSpan(args, describe);
      const opened = await createSourceEventStream(args);
      // The opening's span ends here; each event's execution has a span of its own, in the
      // trace of the write that caused the event (the event's traceparent).
      finishOperationSpan((args.contextValue as GraphQLContext).cost, []);
      if (!(Symbol.asyncIterator in opened)) return opened;
      return mapAsyncIterator(opened, async (event) => {
        if (hasExpired(viewer)) throw new UnauthenticatedError('The token has expired: sign in again and resubscribe');
        const result = await measured({
          ...args,
          rootValue: event,
          contextValue: context(viewer, requestId, eventParent(event)),
        });
        sources.set(result, event);
        return result;
      });
    },
    /** The source event a subscription result was executed for (undefined for other results). */
    eventOf: (result: object): unknown => sources.get(result),
    /** What the execution that produced `result` cost (undefined for results made elsewhere). */
    measurementOf: (result: object): Measurement | undefined => measurements.get(result),
  };
}
