/**
 * The differential executor: graphql-js as the oracle of the compiled executor. Every query and
 * every subscription event runs compiled first, against DynamoDB, with its calls recorded
 * (dynamoTape.ts); graphql-js then runs the same operation in a context of its own (fresh
 * loaders, access rules, cost record and meter) whose client replays those calls. Any difference
 * in the answers is a bug: the operation is answered EXECUTOR_MISMATCH and both answers are
 * logged.
 *
 * Mutations run compiled alone: replaying them would compare answers made at two different
 * instants (timestamps, generated ids) and writing twice is not an option. Their reads and
 * writes are the same code as the queries'; what differs between executors (serial execution
 * of root fields) falls back to graphql-js by class (compiledExecutor.ts).
 */
import { getOperationAST, GraphQLError, OperationTypeNode } from 'graphql';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Logger } from 'pino';
import { settled } from '../db/capacity.js';
import type { RequestCost } from '../db/capacity.js';
import { ErrorCode } from '../errors.js';
import type { GraphQLContext } from '../graphql/context.js';
import type { Execute } from './compiledExecutor.js';
import type { DynamoTape } from './dynamoTape.js';
import { runMetered } from './meter.js';
import type { OperationBudgets } from './meter.js';

/** The two executors answered one operation differently (EXECUTOR=differential only). */
export class ExecutorMismatchError extends GraphQLError {
  constructor(part: AnswerPart) {
    super(`The planned executor and graphql-js answered this operation differently (${part}): a bug in the server`, {
      path: [],
      extensions: { code: ErrorCode.EXECUTOR_MISMATCH, part, http: { status: 500 } },
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
 * set: the planned executor never answers with an error of its own (it leaves any operation in
 * which a field fails to graphql-js), and in which order graphql-js reports the failures of two
 * branches depends on which settles first: timing, in graphql-js itself. When a non-null root
 * field failed (`data` is null), graphql-js reports, besides that failure, the errors of the
 * fields that happened to settle before it, which depends on timing too: such an answer is
 * compared on its root fields' errors.
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
  /** The executor under test (compiled). */
  primary: Execute;
  /** True for a primary answer made by graphql-js after a compiled run: its cost holds both runs. */
  reran?: (result: object) => boolean;
  /** The oracle (graphql-js). */
  oracle: Execute;
  budgets: OperationBudgets;
  /** The tape of the primary's context, and a fresh context replaying it (undefined: not recorded). */
  replay: (context: GraphQLContext) => { tape: DynamoTape; context: GraphQLContext } | undefined;
  log: Logger;
  onDifference?: (part: AnswerPart) => void;
}

/** After the batches scheduled for the next tick (a loader's) have been sent, and every call has settled. */
async function quiesced(cost: RequestCost): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await settled(cost);
}

const isComparable = (args: ExecutionArgs): boolean =>
  getOperationAST(args.document, args.operationName)?.operation !== OperationTypeNode.MUTATION;

/** Runs `args` on both executors (metered each) and answers the primary's result, or EXECUTOR_MISMATCH. */
export function createDifferentialExecutor({
  primary,
  reran = () => false,
  oracle,
  budgets,
  replay,
  log,
  onDifference,
}: DifferentialOptions) {
  return async function executeBoth(args: ExecutionArgs): Promise<ExecutionResult> {
    const context = args.contextValue as GraphQLContext;
    const first = await runMetered(args, budgets, context.cost, primary);
    if (!isComparable(args)) return first;
    const replayed = replay(context);
    if (!replayed) return first;
    // A batch the first execution scheduled for the next tick (a loader's) and calls still in
    // flight (a prefetched page) belong to the tape the oracle replays.
    await quiesced(context.cost);
    const second = await runMetered(
      { ...args, contextValue: replayed.context },
      budgets,
      replayed.context.cost,
      oracle,
    );
    await quiesced(replayed.context.cost);
    // Request counts are comparable only where every call replayed as it was made, by one run,
    // and both runs made the same calls: which of a prefetch and a loader asks first for an
    // item (so which one reads it) depends on timing, in either executor.
    const exact = replayed.tape.exact && replayed.tape.unused === 0 && !reran(first);
    const part = answerDifference(
      { result: first, cost: exact ? context.cost : undefined },
      { result: second, cost: exact ? replayed.context.cost : undefined },
    );
    if (!part) return first;
    onDifference?.(part);
    // On stderr whatever the log level (tests run with silent logs): a difference is a bug.
    process.stderr.write(
      `EXECUTOR MISMATCH (${part}) in ${args.operationName ?? 'an anonymous operation'}: see the log line for both answers\n`,
    );
    log.error(
      {
        part,
        operationName: args.operationName ?? null,
        document: args.document.loc?.source.body,
        variables: args.variableValues,
        compiled: { ...serializedAnswer(first), cost: context.cost },
        graphqlJs: { ...serializedAnswer(second), cost: replayed.context.cost },
        unusedCalls: replayed.tape.unused,
      },
      'EXECUTOR MISMATCH: the planned executor and graphql-js answered differently',
    );
    return { errors: [new ExecutorMismatchError(part)] };
  };
}
