/**
 * The differential executor: graphql-js as the oracle of another executor (the planned one,
 * and any executor the pipeline plugs in through `Execute`). It is test support, plugged into a
 * test's pipeline through the executor interface (`execute` of createPipeline), never part of
 * the server. The operation runs on the executor under test first, against DynamoDB, with its
 * calls recorded (dynamoTape.ts: the pipeline's client must be `taped`); graphql-js then runs the
 * same operation in a context of its own (fresh loaders, access rules, cost record and meter)
 * whose client replays those calls. Any difference in the answers is a bug: it is counted
 * (`onDifference`), written to stderr with both answers in the log, and the operation is answered
 * EXECUTOR_MISMATCH.
 *
 * A mutation is compared on its writes' outcomes: writing twice is not an option, and two writes
 * would answer at two different instants (timestamps, generated ids). The planned executor keeps
 * what each root field's write returned or threw (`writesOf`); graphql-js then runs the mutation
 * with its root fields answering those outcomes instead of writing (`replayWrites`), and
 * completes their payloads on the replayed reads. So what is compared is everything but the
 * write itself, which both run through the same resolver: the payloads, the errors with their
 * paths and codes, null propagation, and where the mutation stops. A mutation whose writes the
 * executor under test did not record (one graphql-js ran whole: variables that do not coerce)
 * is not compared.
 */
import { execute, getOperationAST, GraphQLError, OperationTypeNode } from 'graphql';
import type { ExecutionArgs, ExecutionResult, GraphQLSchema } from 'graphql';
import { pino } from 'pino';
import type { Logger } from 'pino';
import type { QueryLimits } from '../../src/config/index.js';
import { settled } from '../../src/db/capacity.js';
import type { RequestCost } from '../../src/db/capacity.js';
import type { DataSources } from '../../src/db/loaders.js';
import { createContext } from '../../src/graphql/context.js';
import type { GraphQLContext } from '../../src/graphql/context.js';
import { EventFanOut } from '../../src/graphql/eventFanOut.js';
import type { Execute } from '../../src/pipeline/execution/execution.js';
import { meterOf, runMetered } from '../../src/pipeline/execution/meter.js';
import type { OperationBudgets } from '../../src/pipeline/execution/meter.js';
import { replayWrites, writesOf } from '../../src/pipeline/execution/plan/mutation.js';
import { createPlannedExecutor } from '../../src/pipeline/execution/plan/plannedExecutor.js';
import type { PlanFallback, PlannedExecutor } from '../../src/pipeline/execution/plan/plannedExecutor.js';
import { operationBudgetsOf } from '../../src/pipeline/pipeline.js';
import { DynamoTape, taped, tapes } from './dynamoTape.js';

/** The code of a difference: test support's own, no client ever sees it. */
export const EXECUTOR_MISMATCH = 'EXECUTOR_MISMATCH';

/** The executor under test and graphql-js answered one operation differently. */
export class ExecutorMismatchError extends GraphQLError {
  constructor(part: AnswerPart) {
    super(`The executor under test and graphql-js answered this operation differently (${part}): a bug in the server`, {
      path: [],
      extensions: { code: EXECUTOR_MISMATCH, part, http: { status: 500 } },
    });
  }
}

export type AnswerPart = 'data' | 'errors' | 'cost';

/** What two executions must agree on: the answer as a client reads it, and what it cost where comparable. */
export interface Answer {
  result: ExecutionResult;
  cost?: RequestCost | undefined;
}

/** An error as a client tells it from another: message, path, locations, code, HTTP status. */
const errorShape = (error: GraphQLError) => ({
  message: error.message,
  path: error.path ?? null,
  locations: error.locations ?? null,
  code: error.extensions?.code ?? null,
  status: (error.extensions?.http as { status?: unknown } | undefined)?.status ?? null,
});

/**
 * The serialized data (key order included) and errors of an answer. Errors are compared as a
 * multiset: in which order graphql-js reports the failures of two branches depends on which
 * settles first (timing, in graphql-js itself), and the planned executor leaves any operation in
 * which a field fails to graphql-js. When a non-null root field failed (`data` is null),
 * graphql-js reports, besides that failure, the errors of the fields that happened to settle
 * before it, which depends on timing too: such an answer is compared on its root fields' errors.
 */
export function serializedAnswer(result: ExecutionResult): { data: string; errors: string } {
  const errors = (result.errors ?? []).map((error) => errorShape(error));
  const compared =
    result.data === null ? errors.filter((error) => error.path === null || error.path.length <= 1) : errors;
  return {
    data: result.data === undefined ? 'absent' : JSON.stringify(result.data),
    errors: JSON.stringify(compared.map((error) => JSON.stringify(error)).sort()),
  };
}

const costShape = (cost: RequestCost) =>
  JSON.stringify({
    requests: cost.requests,
    byOperation: Object.fromEntries(Object.entries(cost.byOperation).sort(([a], [b]) => (a < b ? -1 : 1))),
    readCapacityUnits: cost.readCapacityUnits,
  });

/**
 * The first part in which two answers differ (null: none). Costs are compared only when both
 * are given: the data, then the errors in order, then the DynamoDB calls and capacity.
 */
export function answerDifference(primary: Answer, oracle: Answer): AnswerPart | null {
  const a = serializedAnswer(primary.result);
  const b = serializedAnswer(oracle.result);
  if (a.data !== b.data) return 'data';
  if (a.errors !== b.errors) return 'errors';
  if (primary.cost && oracle.cost && costShape(primary.cost) !== costShape(oracle.cost)) return 'cost';
  return null;
}

export interface DifferentialOptions {
  /** The executor under test. */
  primary: Execute;
  /** True for a primary answer made by graphql-js after a run of its own: its cost holds both runs. */
  reran?: (result: object) => boolean;
  /** What the replaying context is made of: the pipeline's data (its client `taped`), log and events. */
  data: DataSources;
  events: EventFanOut;
  budgets: OperationBudgets;
  log: Logger;
  onDifference?: (part: AnswerPart) => void;
}

/** After the batches scheduled for the next tick (a loader's) have been sent, and every call has settled. */
export async function quiesced(cost: RequestCost): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await settled(cost);
}

/**
 * A fresh context for `primary`'s viewer whose client answers from `tape` and sends nothing; not
 * traced (it sends nothing to trace).
 */
export function replayContext(
  primary: GraphQLContext,
  tape: DynamoTape,
  { data, events }: Pick<DifferentialOptions, 'data' | 'events'>,
): GraphQLContext {
  const replaying: DataSources = {
    ...data,
    dynamo: { client: data.dynamo.client, doc: tape.replayer(data.dynamo.doc) },
  };
  const context = createContext(replaying, primary.requestId, primary.log, primary.viewer, events, undefined, {
    traced: false,
  });
  if (primary.resume !== undefined) context.resume = primary.resume;
  return context;
}

/**
 * Compares two answers of one operation; on a difference counts it, writes it to stderr and the
 * log, and answers the mismatch error. Null: no difference.
 */
export function reportDifference(
  primary: Answer,
  oracle: Answer,
  about: {
    operationName: string | null | undefined;
    document: string | undefined;
    variables: unknown;
    unusedCalls: number;
  },
  { log, onDifference }: Pick<DifferentialOptions, 'log' | 'onDifference'>,
): ExecutorMismatchError | null {
  const part = answerDifference(primary, oracle);
  if (!part) return null;
  onDifference?.(part);
  differences.push(`${part} in ${about.operationName ?? 'an anonymous operation'}`);
  // On stderr whatever the log level (tests run with silent logs): a difference is a bug.
  process.stderr.write(
    `EXECUTOR MISMATCH (${part}) in ${about.operationName ?? 'an anonymous operation'}: see the log line for both answers\n`,
  );
  log.error(
    {
      part,
      ...about,
      primary: { ...serializedAnswer(primary.result), cost: primary.cost },
      graphqlJs: { ...serializedAnswer(oracle.result), cost: oracle.cost },
    },
    'EXECUTOR MISMATCH: the executor under test and graphql-js answered differently',
  );
  return new ExecutorMismatchError(part);
}

/**
 * The differences found since a test began (differentialTally.ts fails the test that made any,
 * whatever that test asserts: a budget stop or a refusal could otherwise hide one).
 */
export const differences: string[] = [];

/** How many operations of each type this process compared (a suite prints them: what the oracle covered). */
export const compared: Record<OperationTypeNode, number> = { query: 0, mutation: 0, subscription: 0 };

/**
 * Runs an operation on `primary` (in the pipeline's meter, recording its calls) and on graphql-js
 * (replaying them, metered on its own), and answers the primary's result, or EXECUTOR_MISMATCH.
 */
export function createDifferentialExecutor(options: DifferentialOptions): Execute {
  const { primary, reran = () => false, budgets } = options;
  return async function executeBoth(args: ExecutionArgs, facts): Promise<ExecutionResult> {
    const context = args.contextValue as GraphQLContext;
    const operation = facts?.operation ?? getOperationAST(args.document, args.operationName);
    const tape = new DynamoTape();
    // A batch the first execution schedules for the next tick (a loader's) and calls still in
    // flight (a prefetched page) are sent from within it: they belong to the tape too.
    const first = await tapes.run(tape, async () => {
      const result = await primary(args, facts);
      await quiesced(context.cost);
      return result;
    });
    const writes = operation?.operation === OperationTypeNode.MUTATION ? writesOf(context) : undefined;
    if (operation?.operation === OperationTypeNode.MUTATION && !writes) return first;
    compared[operation?.operation ?? OperationTypeNode.QUERY] += 1;
    const replayed = replayContext(context, tape, options);
    replayWrites(replayed, writes);
    const second = await runMetered(
      { ...args, contextValue: replayed },
      budgets,
      replayed.cost,
      execute,
      operation ?? undefined,
    );
    replayWrites(replayed, undefined);
    await quiesced(replayed.cost);
    // Request counts are comparable only where every call replayed as it was made, by one run,
    // and both runs made the same calls: which of a prefetch and a loader asks first for an
    // item (so which one reads it) depends on timing, in either executor.
    const exact = tape.exact && tape.unused === 0 && !reran(first);
    // What the client is sent: an operation its meter stopped is answered with that error alone
    // (runMetered, around this executor), as graphql-js's answer is here.
    const stopped = meterOf(context)?.exceeded;
    const mismatch = reportDifference(
      { result: stopped ? { errors: [stopped] } : first, cost: exact ? context.cost : undefined },
      { result: second, cost: exact ? replayed.cost : undefined },
      {
        operationName: args.operationName,
        document: args.document.loc?.source.body,
        variables: args.variableValues,
        unusedCalls: tape.unused,
      },
      options,
    );
    return mismatch ? { errors: [mismatch] } : first;
  };
}

/**
 * The planned executor (src/pipeline/execution/plan/, what EXECUTOR=auto ships) under test against
 * graphql-js: what the generated documents and the int files of the differential suite run
 * through. It plans against the schema its executions are given (the pipeline's).
 */
export function plannedAgainstGraphqlJs(
  options: Omit<DifferentialOptions, 'primary' | 'reran'> & { onFallback?: (fallback: PlanFallback) => void },
): Execute {
  let planned: PlannedExecutor | undefined;
  const plannedFor = (schema: GraphQLSchema) =>
    (planned ??= createPlannedExecutor({
      schema,
      maxDocuments: 1000,
      maxBytes: 32 * 2 ** 20,
      onFallback: options.onFallback,
    }));
  return createDifferentialExecutor({
    ...options,
    primary: (args) => plannedFor(args.schema).execute(args),
    reran: (result) => planned?.reran(result) ?? false,
  });
}

/**
 * A test server's data and executor for the differential suite (vitest.config.ts): its client
 * taped, every operation answered by the planned executor and checked by graphql-js replaying
 * its calls. A difference answers EXECUTOR_MISMATCH, which fails the test that sent it.
 */
export function differentialServer(data: DataSources, limits: QueryLimits): { data: DataSources; execute: Execute } {
  const recorded: DataSources = { ...data, dynamo: { client: data.dynamo.client, doc: taped(data.dynamo.doc) } };
  return {
    data: recorded,
    execute: plannedAgainstGraphqlJs({
      data: recorded,
      events: new EventFanOut(),
      log: pino({ level: 'error' }, process.stderr),
      budgets: operationBudgetsOf(limits),
    }),
  };
}
