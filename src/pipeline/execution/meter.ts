/**
 * The operation meter: budgets enforced while an operation runs, on every transport (they all
 * execute through execution.ts `run`). Per operation it counts DynamoDB requests and read
 * capacity (the context's cost record, the one place calls are counted) and the answer's size in
 * entries and bytes, and stops the operation with BUDGET_EXCEEDED as soon as one is exceeded.
 *
 * The answer is counted before it is built: when a field returns an object or a list, the meter
 * adds the entries that the field's selection will create on each element (its collected fields,
 * fragments and @skip/@include applied, `__typename` and every alias included) and the bytes
 * they will take, before the executor completes them. Meta fields such as `__typename` have no
 * resolver to wrap, so they are counted by their parent. The meter sits in the schema's resolvers
 * (`meterSchema`) and in the context (`meterOf`), never in an executor's internals: graphql-js and
 * a compiled executor call the same resolvers with the same `info`. What a selection adds on one
 * object, its shape, is collected and kept across executions by meterShapes.ts.
 *
 * Once stopped, every further object or list field throws the same error, so nothing more is read
 * or built, and `runMetered` answers the operation with that error alone: never a partial answer.
 */
import {
  defaultFieldResolver,
  getNamedType,
  getNullableType,
  getOperationAST,
  GraphQLError,
  isCompositeType,
  isListType,
  isObjectType,
  Kind,
} from 'graphql';
import type {
  ExecutionArgs,
  ExecutionResult,
  GraphQLCompositeType,
  GraphQLOutputType,
  GraphQLResolveInfo,
  GraphQLSchema,
  OperationDefinitionNode,
} from 'graphql';
import type { RequestCost } from '../../db/capacity.js';
import { ErrorCode } from '../../errors.js';
import type { CollectOptions } from '../../graphql/selections.js';
import { isPromiseLike } from './documentCache.js';
import { collectShape, fieldShape, keptShapesOf, leafBytes, NO_TYPE } from './meterShapes.js';
import type { Shape, Shapes } from './meterShapes.js';

/** What one operation may spend while it runs (MAX_OPERATION_* settings, docs/security.md). */
export interface OperationBudgets {
  /** DynamoDB requests, counting those in flight. */
  requests: number;
  /** Read capacity units DynamoDB reported. */
  readCapacityUnits: number;
  /** Entries of the answer: every field of every object, every element of every list. */
  entries: number;
  /** Bytes of the answer's JSON, as estimated while it is built. */
  bytes: number;
}

export type BudgetName = keyof OperationBudgets;

/** An operation stopped by its meter; the answer carries this error alone (HTTP 400). */
export class BudgetExceededError extends GraphQLError {
  constructor(budget: BudgetName, limit: number) {
    super(
      `The operation exceeded its budget of ${limit} ${BUDGET_WORDS[budget]} while it ran: ask for fewer fields, fewer aliases or smaller pages`,
      {
        // A path marks the error as located: the executor passes this one instance on
        // unchanged from every field that throws it, instead of wrapping a copy per field.
        path: [],
        extensions: { code: ErrorCode.BUDGET_EXCEEDED, budget, limit, http: { status: 400 } },
      },
    );
  }
}

const BUDGET_WORDS: Record<BudgetName, string> = {
  requests: 'DynamoDB requests',
  readCapacityUnits: 'read capacity units',
  entries: 'result entries',
  bytes: 'result bytes',
};

export class OperationMeter {
  entries = 0;
  bytes = 0;
  private stopped: BudgetExceededError | undefined;
  /** Shapes by the field (first node of its group) and the object type: the operation's kept ones, or this execution's own. */
  private shapes: Shapes | undefined;

  constructor(
    readonly budgets: OperationBudgets,
    private readonly cost: RequestCost,
  ) {}

  /** The error that stopped the operation, if one did. */
  get exceeded(): BudgetExceededError | undefined {
    return this.stopped;
  }

  private stop(budget: BudgetName): never {
    this.stopped ??= new BudgetExceededError(budget, this.budgets[budget]);
    throw this.stopped;
  }

  /** Throws BUDGET_EXCEEDED once any budget is spent; called before and after every object or list field. */
  check(): void {
    if (this.stopped) throw this.stopped;
    const { requests, readCapacityUnits } = this.budgets;
    if (this.cost.requests + (this.cost.pending?.size ?? 0) > requests) this.stop('requests');
    if (this.cost.readCapacityUnits > readCapacityUnits) this.stop('readCapacityUnits');
  }

  private add(entries: number, bytes: number): void {
    this.entries += entries;
    this.bytes += bytes;
    if (this.entries > this.budgets.entries) this.stop('entries');
    if (this.bytes > this.budgets.bytes) this.stop('bytes');
  }

  /**
   * The shape of one object of `named`, returned by the field of `info` (meterShapes.ts): the
   * operation's kept shapes, or this execution's own.
   */
  private shapeOf(named: GraphQLCompositeType, info: GraphQLResolveInfo): Shape {
    const shapes = (this.shapes ??=
      keptShapesOf(info.schema, info.operation, () => info.fragments, info.variableValues) ??
      new Map<object, Map<string, Shape>>());
    return fieldShape(shapes, named, info);
  }

  /** Counts what `value`, returned by a field of type `type`, will add to the answer. */
  private countValue(value: unknown, type: GraphQLOutputType, info: GraphQLResolveInfo): void {
    if (value === null || value === undefined || value instanceof Error) return;
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      if (typeof value !== 'object' || !(Symbol.iterator in value)) return;
      let length = 0;
      for (const item of value as Iterable<unknown>) {
        length += 1;
        this.countValue(item, nullable.ofType, info);
      }
      this.add(length, length + 2);
      return;
    }
    const named = getNamedType(nullable);
    if (!isCompositeType(named)) return;
    // One object of the field's type: its shape, and the leaves it holds.
    const shape = this.shapeOf(named, info);
    if (shape === NO_TYPE) return;
    let bytes = shape.fixedBytes;
    const source = value as Record<string, unknown>;
    for (const property of shape.properties) bytes += leafBytes(source[property]);
    this.add(shape.entries, bytes);
  }

  /** Counts the value a field returned and hands it back; throws once a budget is exceeded. */
  resolved<T>(value: T, info: GraphQLResolveInfo): T {
    this.check();
    this.countValue(value, info.returnType, info);
    return value;
  }

  /**
   * Starts counting the answer again, for an execution that replaces the one counted so far (the
   * planned executor's re-run on graphql-js, plan/plannedExecutor.ts): the answer sent is the re-run's,
   * so only its entries and bytes count. DynamoDB requests and read units stay counted, since the
   * first run did spend them; the re-run reads through the same loaders, so it adds little. A stop
   * for requests or read units therefore holds at once in the re-run; a stop for entries or bytes
   * was about an answer that is thrown away. Throws BUDGET_EXCEEDED when the root fields alone
   * exceed a budget.
   */
  restart(args: ExecutionArgs, operation?: OperationDefinitionNode | null): void {
    this.entries = 0;
    this.bytes = 0;
    this.stopped = undefined;
    try {
      this.root(args, operation);
    } catch (error) {
      // As in runMetered: variables that do not coerce are the executor's to refuse.
      if (error instanceof BudgetExceededError) throw error;
    }
  }

  /**
   * Counts the operation's root fields (their object is the root value, which no field returns).
   * `operation` is admission's (looked up in the document when not given).
   */
  root(args: ExecutionArgs, operation = getOperationAST(args.document, args.operationName)): void {
    const type = operation && args.schema.getRootType(operation.operation);
    if (!operation || !type) return;
    let fragments: CollectOptions['fragments'] | undefined;
    const fragmentsOf = (): CollectOptions['fragments'] =>
      (fragments ??= Object.fromEntries(
        args.document.definitions.flatMap((definition) =>
          definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition]] : [],
        ),
      ));
    this.shapes ??=
      keptShapesOf(args.schema, operation, fragmentsOf, args.variableValues) ?? new Map<object, Map<string, Shape>>();
    const shape =
      this.shapes.get(operation)?.get(type.name) ??
      collectShape(this.shapes, operation, [operation.selectionSet], type, {
        schema: args.schema,
        fragments: fragmentsOf(),
        variables: args.variableValues,
      });
    this.add(shape.entries, 2);
  }
}

/**
 * A context an execution runs in carries its meter as a field (`runMetered` sets it): a resolver
 * reads it from the context it is given, with no table to look it up in.
 */
export interface MeteredContext {
  meter?: OperationMeter | undefined;
}

const metered = new WeakSet<GraphQLSchema>();

/** The meter of the execution whose context this is (none outside `runMetered`). */
export const meterOf = (context: unknown): OperationMeter | undefined =>
  typeof context === 'object' && context !== null ? (context as MeteredContext).meter : undefined;

const ignore = (): void => undefined;

/**
 * Puts the meter in front of every field that returns an object or a list of them (the fields
 * whose selections make an answer grow). Leaf fields keep their resolvers untouched, so a compiled
 * executor still reads them as plain properties. Mutates and returns `schema`.
 */
export function meterSchema(schema: GraphQLSchema): GraphQLSchema {
  // Two pipelines may share a schema (the response cache's): its fields are wrapped once.
  if (metered.has(schema)) return schema;
  metered.add(schema);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!isCompositeType(getNamedType(field.type)) && !isListType(getNullableType(field.type))) continue;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context, info) => {
        const meter = meterOf(context);
        if (!meter) return resolve(source, args, context, info);
        meter.check();
        const value: unknown = resolve(source, args, context, info);
        if (!isPromiseLike(value)) return meter.resolved(value, info);
        const counted = Promise.resolve(value).then((resolved) => meter.resolved(resolved, info));
        // graphql-js drops a pending field's promise when a sibling non-null field throws
        // synchronously: its rejection would then be unhandled, which ends a Node process. The
        // executor still sees the rejection through the promise it is given.
        counted.catch(ignore);
        return counted;
      };
    }
  }
  return schema;
}

/**
 * Runs one execution under a fresh meter for its context, with `budgets`. An operation its meter
 * stopped is answered with BUDGET_EXCEEDED alone, whatever else the executor produced.
 */
export function runMetered(
  args: ExecutionArgs,
  budgets: OperationBudgets,
  cost: RequestCost,
  execute: (args: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult,
  operation?: OperationDefinitionNode,
): Promise<ExecutionResult> {
  const meter = new OperationMeter(budgets, cost);
  const context = args.contextValue;
  if (typeof context === 'object' && context !== null) (context as MeteredContext).meter = meter;
  try {
    meter.root(args, operation);
  } catch (error) {
    if (error instanceof BudgetExceededError) return Promise.resolve({ errors: [error] });
    // Variables that do not coerce (a directive's `if` missing): the executor refuses them in its
    // own words, before any field runs, so there is nothing for the meter to count.
  }
  let result: Promise<ExecutionResult> | ExecutionResult;
  try {
    result = execute(args);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  // One `then`, not an async function: an execution's promises are counted (docs/performance.md).
  return Promise.resolve(result).then((answer) => (meter.exceeded ? { errors: [meter.exceeded] } : answer));
}
