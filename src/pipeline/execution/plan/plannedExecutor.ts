/**
 * Planned execution: each admitted document's operations compiled once into plans (plan.ts),
 * kept in a cache bounded by documents and estimated bytes (the server's trusted documents are
 * planned at start-up), and executed breadth-first by rounds of reads (run.ts). graphql-js stays
 * the oracle: what the planner does not answer exactly as graphql-js would runs on graphql-js,
 * and each such execution is counted by why (`onFallback`, a metric):
 *
 * - `operation`: no operation of that name, or a root type the schema lacks (graphql-js says so);
 * - `variables`: variables that do not coerce (graphql-js words the refusal; nothing has run);
 * - `size`: a document whose plan would exceed MAX_PLAN_FIELDS fields;
 * - `async`: a resolver returned a promise (a field that reads without being declared as one);
 * - `error`: a field failed (an access refusal, a refused argument, a failed read, a value
 *   graphql-js would refuse), where graphql-js reports the error at its path;
 * - `null`: a non-null field was null, where graphql-js nulls the parent;
 * - `budget`: the operation meter stopped the run, where graphql-js decides which budget.
 *
 * The last four stop a run that has read already: graphql-js then executes on the same loaders
 * (what was read is not read again) under the same meter, restarted, so the operation is counted
 * once: the requests the planned run made, and graphql-js's answer. A mutation runs planned too,
 * its root fields one after the other (mutation.ts); where it stops, graphql-js completes the
 * root field alone on the outcome of its write, which never runs twice.
 */
import { execute, getOperationAST, Kind, OperationTypeNode, parse } from 'graphql';
import type {
  DocumentNode,
  ExecutionArgs,
  ExecutionResult,
  FragmentDefinitionNode,
  GraphQLSchema,
  OperationDefinitionNode,
} from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import type { GraphQLContext } from '../../../graphql/context.js';
import { BudgetExceededError, meterOf } from '../meter.js';
import { resultOfJson } from './answer.js';
import { compilePlan, conditionsOf, conditionVariables, PlanTooLargeError } from './plan.js';
import type { Plan } from './plan.js';
import { documentCache } from '../documentCache.js';
import { replayableWrites, runMutation } from './mutation.js';
import { PlannedRun } from './run.js';
import type { RunFallback } from './run.js';

/** Why an execution ran on graphql-js instead (a metric label: a closed set). */
export type PlanFallback = 'operation' | 'variables' | 'size' | RunFallback;

export const PLAN_FALLBACKS: readonly PlanFallback[] = [
  'operation',
  'variables',
  'size',
  'async',
  'error',
  'null',
  'budget',
];

export type Execute = (args: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult;

export interface PlannedExecutorOptions {
  schema: GraphQLSchema;
  /** Documents kept, at most (PLANNED_DOCUMENTS_MAX, src/config/api.ts). */
  maxDocuments: number;
  /** Estimated bytes of the plans kept, at most (COMPILED_DOCUMENTS_MAX_BYTES). */
  maxBytes: number;
  /** Called once per execution that graphql-js ran instead, with why. */
  onFallback?: ((fallback: PlanFallback) => void) | undefined;
}

/** A document's fragments, the variables its plans depend on, and its plans by operation and their values. */
interface DocumentPlans {
  fragments: Record<string, FragmentDefinitionNode>;
  conditions: string[];
  plans: Map<string, Plan | 'size' | 'error'>;
  bytes: number;
}

/** What a plan takes, estimated: its fields and the closures and arrays around them. */
const BYTES_PER_PLAN_FIELD = 400;
const BYTES_PER_DOCUMENT = 2048;

export type PlannedExecutor = ReturnType<typeof createPlannedExecutor>;

export function createPlannedExecutor({ schema, maxDocuments, maxBytes, onFallback }: PlannedExecutorOptions) {
  const { entries: documents, sourceOf } = documentCache<DocumentPlans>({ maxDocuments, maxBytes });
  // A root mutation field completed by graphql-js answers its write's outcome instead of writing again.
  replayableWrites(schema);

  function plansOf(document: DocumentNode): { source: string; entry: DocumentPlans } {
    const source = sourceOf(document);
    let entry = documents.get(source);
    if (!entry) {
      const fragments: Record<string, FragmentDefinitionNode> = {};
      for (const definition of document.definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
      }
      entry = { fragments, conditions: conditionVariables(document), plans: new Map(), bytes: BYTES_PER_DOCUMENT };
      documents.set(source, entry);
    }
    return { source, entry };
  }

  /**
   * The plan of `operation` for these variables' conditions, compiled on first use; else why
   * graphql-js runs it (`size`: too large, `error`: a condition graphql-js refuses).
   */
  function planOf(
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Record<string, unknown>,
  ): Plan | 'size' | 'error' | 'operation' {
    const rootType = schema.getRootType(operation.operation);
    if (!rootType) return 'operation';
    const { source, entry } = plansOf(document);
    const key = `${operation.name?.value ?? ''}\n${conditionsOf(entry.conditions, variables)}`;
    let plan = entry.plans.get(key);
    if (plan === undefined) {
      try {
        plan = compilePlan(schema, entry.fragments, operation, rootType, variables);
      } catch (error) {
        // A directive's condition graphql-js refuses (a null `if`): graphql-js reports it.
        plan = error instanceof PlanTooLargeError ? 'size' : 'error';
      }
      entry.plans.set(key, plan);
      entry.bytes += typeof plan === 'string' ? 0 : plan.fieldCount * BYTES_PER_PLAN_FIELD;
      // Set again: the cache counts the entry's new size.
      documents.set(source, entry);
    }
    return plan;
  }

  const fallBack = (args: ExecutionArgs, fallback: PlanFallback): Promise<ExecutionResult> | ExecutionResult => {
    onFallback?.(fallback);
    return execute(args);
  };

  // Answers graphql-js gave after a planned run had read (their cost includes both runs).
  const reran = new WeakSet<object>();
  /** graphql-js after a planned run stopped: the meter counts its answer alone (the run's reads stay counted). */
  const rerun = async (args: ExecutionArgs, fallback: PlanFallback): Promise<ExecutionResult> => {
    try {
      meterOf(args.contextValue)?.restart(args);
    } catch (error) {
      if (error instanceof BudgetExceededError) return { errors: [error] };
      throw error;
    }
    const result = await fallBack(args, fallback);
    reran.add(result);
    return result;
  };

  /** Executes `args` planned, or on graphql-js for what the planner leaves to it (counted). */
  function run(args: ExecutionArgs): Promise<ExecutionResult> | ExecutionResult {
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation) return fallBack(args, 'operation');
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], args.variableValues ?? {}, {
      maxErrors: 50,
    });
    if (coerced.errors) return fallBack(args, 'variables');
    const variables = coerced.coerced;
    const plan = planOf(args.document, operation, variables);
    if (typeof plan === 'string') return fallBack(args, plan);
    const context = args.contextValue as GraphQLContext;
    const planned = new PlannedRun(plan, {
      schema,
      fragments: plansOf(args.document).entry.fragments,
      context,
      rootValue: args.rootValue,
      variables,
      meter: meterOf(context),
    });
    if (operation.operation === OperationTypeNode.MUTATION) {
      return runMutation({
        args,
        plan,
        run: planned,
        meter: meterOf(context),
        onFallback: (fallback) => onFallback?.(fallback),
        onGraphqlJs: (result) => reran.add(result),
      });
    }
    // The answer, or graphql-js's, within the run's own promise: no `then` of its own.
    return planned.execute(resultOfJson, (fallback) => rerun(args, fallback.reason));
  }

  return {
    execute: run,
    /** True for an answer graphql-js gave after a planned run of the same operation had started. */
    reran: (result: object): boolean => reran.has(result),
    /**
     * Plans the operations of `source` now (the trusted documents, at start-up): every operation
     * of a document without condition variables (one with them is planned for their values when
     * they come).
     */
    precompile(source: string): void {
      const document = parse(source);
      if (plansOf(document).entry.conditions.length > 0) return; // planned per the conditions' values
      for (const definition of document.definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
        planOf(document, definition, {});
      }
    },
    /** Documents kept, and their estimated bytes (tests, metrics). */
    get size(): { documents: number; bytes: number } {
      return { documents: documents.size, bytes: documents.calculatedSize };
    },
  };
}
