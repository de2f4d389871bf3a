/**
 * A planned mutation. graphql-js runs a mutation's root fields one after the other, each field's
 * write and then its payload's selection before the next write; so does this, with the write
 * left exactly as it is (the field's resolver, called once with its `info`) and the payload's
 * selection completed breadth-first by rounds of reads (run.ts), one promise per DynamoDB round
 * trip.
 *
 * A write is never run twice. So where the planner cannot answer as graphql-js would (the write
 * failed, a payload's field failed or was null where the schema says non-null, a resolver
 * returned a promise it did not expect), graphql-js completes that root field alone: it executes
 * the operation reduced to that field, whose resolver then hands back the outcome the write
 * already had (`replayWrites`) instead of writing again. What the planned completion had read is
 * in the request's loaders and is not read again. graphql-js's value and errors for the field go
 * into the answer as it made them; a non-null root field it nulled ends the mutation (no later
 * write runs, `data` is null), as graphql-js ends it.
 */
import { defaultFieldResolver, execute, Kind } from 'graphql';
import type {
  DocumentNode,
  ExecutionArgs,
  ExecutionResult,
  GraphQLError,
  GraphQLFieldResolver,
  GraphQLSchema,
  OperationDefinitionNode,
} from 'graphql';
import type { OperationMeter } from '../meter.js';
import { isPromiseLike } from '../documentCache.js';
import { dataOfJson, resultOfJson } from './answer.js';
import type { Plan, PlanField } from './plan.js';
import { Fallback, PendingWrite } from './run.js';
import type { PlannedRun, RunFallback } from './run.js';

/** How a root field's resolver ended: its value, or what it threw or rejected with. */
export type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The outcomes graphql-js's root resolvers hand back instead of writing, per execution (its context), by response key. */
const replays = new WeakMap<object, ReadonlyMap<string, WriteOutcome>>();
/** The outcomes of the writes of an execution so far (its context), by response key. */
const outcomes = new WeakMap<object, Map<string, WriteOutcome>>();
const replaying = new WeakSet<GraphQLSchema>();

/**
 * Puts a replay in front of every root mutation field's resolver: while `context` has outcomes to
 * replay (`replayWrites`), the field answers its write's outcome instead of running it. Once per
 * schema; mutates it (as the meter and the tracing do). Without a replay, the resolver runs as ever.
 */
export function replayableWrites(schema: GraphQLSchema): void {
  const mutation = schema.getMutationType();
  if (!mutation || replaying.has(schema)) return;
  replaying.add(schema);
  for (const field of Object.values(mutation.getFields())) {
    const resolve: GraphQLFieldResolver<unknown, unknown> = field.resolve ?? defaultFieldResolver;
    field.resolve = (source, args, context: unknown, info) => {
      const outcome =
        info.path.prev === undefined && typeof context === 'object' && context !== null
          ? replays.get(context)?.get(String(info.path.key))
          : undefined;
      if (!outcome) return resolve(source, args, context, info);
      // Rejected with what the write threw, as it is (graphql-js locates and wraps it as ever).
      return outcome.ok ? outcome.value : Promise.reject(outcome.error); // eslint-disable-line @typescript-eslint/prefer-promise-reject-errors
    };
  }
}

/**
 * From now on the root mutation fields of `context`'s executions answer these outcomes instead of
 * writing (undefined: they write again). A test's oracle replays a planned mutation's writes with
 * it, as the fall-back here does.
 */
export function replayWrites(context: object, replayed: ReadonlyMap<string, WriteOutcome> | undefined): void {
  if (replayed) replays.set(context, replayed);
  else replays.delete(context);
}

/** The outcomes of the writes the planned executor ran in `context`'s execution, by response key. */
export const writesOf = (context: object): ReadonlyMap<string, WriteOutcome> | undefined => outcomes.get(context);

/** The operation reduced to one root field, with the document's fragments: what graphql-js completes alone. */
function documentOf(args: ExecutionArgs, operation: OperationDefinitionNode, field: PlanField): DocumentNode {
  return {
    kind: Kind.DOCUMENT,
    definitions: [
      { ...operation, selectionSet: { kind: Kind.SELECTION_SET, selections: field.nodes } },
      ...args.document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION),
    ],
  };
}

export interface MutationOptions {
  args: ExecutionArgs;
  plan: Plan;
  run: PlannedRun;
  meter: OperationMeter | undefined;
  /** Called once, the first time graphql-js completes a root field. */
  onFallback: (fallback: RunFallback) => void;
  /** Called with the answer when graphql-js completed any of its root fields. */
  onGraphqlJs: (result: ExecutionResult) => void;
}

/**
 * Runs the mutation `plan`: its answer (`data` known as JSON), with the errors of the root fields
 * graphql-js completed, in order; `data` null once one of them nulled it.
 */
export function runMutation({
  args,
  plan,
  run,
  meter,
  onFallback,
  onGraphqlJs,
}: MutationOptions): ExecutionResult | Promise<ExecutionResult> {
  const context = args.contextValue as object;
  const { fields } = plan.root;
  const written = new Map<string, WriteOutcome>();
  outcomes.set(context, written);
  const errors: GraphQLError[] = [];
  let fellBack = false;

  const answer = (result: ExecutionResult): ExecutionResult => {
    if (fellBack) onGraphqlJs(result);
    return result;
  };

  /** graphql-js completes root field `index` on its write's outcome; then the next field. */
  const byGraphqlJs = (
    index: number,
    field: PlanField,
    why: RunFallback,
    mark: { entries: number; bytes: number } | undefined,
  ): ExecutionResult | Promise<ExecutionResult> => {
    if (!fellBack) onFallback(why);
    fellBack = true;
    // The planned completion's count is replaced by graphql-js's (unless the meter stopped the operation).
    if (meter && mark && !meter.exceeded) {
      meter.entries = mark.entries;
      meter.bytes = mark.bytes;
    }
    replays.set(context, written);
    let result: ExecutionResult | Promise<ExecutionResult>;
    try {
      result = execute({ ...args, document: documentOf(args, plan.operation, field) });
    } catch (error) {
      replays.delete(context);
      throw error;
    }
    const completed = (done: ExecutionResult): ExecutionResult | Promise<ExecutionResult> => {
      replays.delete(context);
      if (done.errors) errors.push(...done.errors);
      if (!done.data) return answer({ data: null, errors });
      run.putRootField(index, done.data[field.responseKey]);
      return step(index + 1);
    };
    return isPromiseLike(result) ? result.then(completed) : completed(result);
  };

  /** The write of root field `index` ended with `outcome`: its payload completed, then the next field. */
  const wrote = (index: number, outcome: WriteOutcome): ExecutionResult | Promise<ExecutionResult> => {
    const field = fields[index] as PlanField;
    written.set(field.responseKey, outcome);
    if (!outcome.ok) return byGraphqlJs(index, field, 'error', undefined);
    const mark = meter && { entries: meter.entries, bytes: meter.bytes };
    const stopped = (error: unknown): ExecutionResult | Promise<ExecutionResult> => {
      if (!(error instanceof Fallback)) throw error;
      return byGraphqlJs(index, field, error.reason, mark);
    };
    let done: void | Promise<void>;
    try {
      done = run.completeRootField(index, outcome.value);
    } catch (error) {
      return stopped(error);
    }
    return isPromiseLike(done) ? done.then(() => step(index + 1), stopped) : step(index + 1);
  };

  /**
   * Starts a write its resolver handed over: the rest of the mutation goes on within the write's
   * last request's own `then`, and the mutation costs one promise more, not one per step.
   */
  const startWrite = (index: number, write: PendingWrite): Promise<ExecutionResult> =>
    new Promise<ExecutionResult>((resolve, reject) => {
      const next = (outcome: WriteOutcome): void => {
        try {
          resolve(wrote(index, outcome));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      };
      write.start({
        done: (payload) => {
          // What graphql-js's meter counts of a root field's value (the resolver gave it nothing).
          try {
            meter?.resolved(payload, run.rootInfo(index));
          } catch (error) {
            next({ ok: false, error });
            return;
          }
          next({ ok: true, value: payload });
        },
        failed: (error) => next({ ok: false, error }),
      });
    });

  /** Root field `index` and those after it, one after the other. */
  const step = (index: number): ExecutionResult | Promise<ExecutionResult> => {
    if (index === fields.length) {
      const json = run.answer();
      // Without errors, the response writes the JSON as it is.
      return answer(errors.length > 0 ? { data: dataOfJson(json), errors } : resultOfJson(json));
    }
    let value: unknown;
    try {
      value = run.resolveRootField(index);
    } catch (error) {
      return wrote(index, { ok: false, error });
    }
    if (value instanceof PendingWrite) return startWrite(index, value);
    if (!isPromiseLike(value)) return wrote(index, { ok: true, value });
    return Promise.resolve(value).then(
      (resolved) => wrote(index, { ok: true, value: resolved }),
      (error: unknown) => wrote(index, { ok: false, error }),
    );
  };

  return step(0);
}
