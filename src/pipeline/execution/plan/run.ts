/**
 * One execution of a plan, breadth-first by rounds of reads. The executor resolves every field
 * it can without waiting (in graphql-js's order: an object's fields one after the other, a
 * synchronous value's own fields at once), calling the schema's resolvers with one `info` per
 * field of the plan, shared by all the objects it resolves. A field that reads (src/graphql/
 * reads.ts) adds its key to the round instead of reading; when nothing more can be resolved, the
 * round's keys are read, each source's at once (every node of the round in one BatchGetItem, keys
 * deduplicated and those already read skipped, item collections merged by the lookahead's read
 * as ever), and the values read complete their fields, which makes the next round. One promise
 * per round, not one per field; the answer is written as JSON at the end (answer.ts).
 *
 * The executor answers only what it answers exactly as graphql-js would. Anything else stops the
 * run with a `Fallback` naming why, and graphql-js executes the operation instead, on the same
 * loaders (plannedExecutor.ts): a resolver that returns a promise (a field that reads without
 * being declared as such), any error (an access refusal, a failed read, a value graphql-js would
 * refuse), a null in a non-null field (graphql-js nulls the parent and reports the error), and the
 * operation meter stopping the run.
 */
import { defaultFieldResolver, defaultTypeResolver } from 'graphql';
import type { FieldNode, FragmentDefinitionNode, GraphQLResolveInfo, GraphQLSchema } from 'graphql';
import type { Path } from 'graphql/jsutils/Path.js';
import { getArgumentValues } from 'graphql/execution/values.js';
import type { GraphQLContext } from '../../../graphql/context.js';
import type { Continuation } from '../../../db/continuation.js';
import type { AnyReadField, ReadRound, Source } from '../../../graphql/reads.js';
import type { StartWrite } from '../../../graphql/writeField.js';
import { BudgetExceededError } from '../meter.js';
import type { OperationMeter } from '../meter.js';
import { answerJson, ListNode, ObjectNode, put } from './answer.js';
import type { Container } from './answer.js';
import type { Completion, Plan, PlanField } from './plan.js';
import { isPromiseLike } from '../documentCache.js';

/** Why a run left the operation to graphql-js (a metric label: a closed set, with the static ones). */
export type RunFallback = 'async' | 'error' | 'null' | 'budget';

/** A root mutation field's write, handed over by its resolver for the executor to start (plan/mutation.ts). */
export class PendingWrite {
  constructor(readonly start: StartWrite) {}
}

/** The run stopped: graphql-js answers the operation instead. */
export class Fallback extends Error {
  override name = 'Fallback';
  constructor(
    readonly reason: RunFallback,
    options?: { cause?: unknown },
  ) {
    super(`the planned executor leaves this operation to graphql-js (${reason})`, options);
  }
}

const ignore = (): void => undefined;

const isIterableObject = (value: unknown): value is Iterable<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function';

/** The response path of `node` as graphql-js builds it (typename on field keys, none on list indices). */
function pathOf(node: Container | undefined): Path | undefined {
  if (!node?.parent) return undefined;
  return {
    prev: pathOf(node.parent),
    key: node.key,
    typename: node.parent instanceof ObjectNode ? node.parent.selection.type.name : undefined,
  };
}

/** A field's read, waiting for its round. */
interface Read {
  field: AnyReadField;
  key: unknown;
  parent: unknown;
  args: unknown;
  object: ObjectNode;
  planField: PlanField;
}

export interface RunOptions {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
  context: GraphQLContext;
  rootValue: unknown;
  variables: Record<string, unknown>;
  meter: OperationMeter | undefined;
}

/**
 * The `info` of one field of the plan in one execution: what graphql-js gives a resolver, the
 * same object for every object the field is resolved on. `path` is the path of the object being
 * resolved when it is read (a resolver that keeps `info` must read it at once).
 */
class FieldInfo implements GraphQLResolveInfo {
  readonly fieldName: string;
  readonly fieldNodes: GraphQLResolveInfo['fieldNodes'];
  readonly returnType: GraphQLResolveInfo['returnType'];
  readonly parentType: GraphQLResolveInfo['parentType'];
  readonly schema: GraphQLSchema;
  readonly fragments: GraphQLResolveInfo['fragments'];
  readonly rootValue: unknown;
  readonly operation: GraphQLResolveInfo['operation'];
  readonly variableValues: GraphQLResolveInfo['variableValues'];

  constructor(
    private readonly run: PlannedRun,
    private readonly field: PlanField,
    options: RunOptions,
    plan: Plan,
  ) {
    this.fieldName = field.definition.name;
    this.fieldNodes = field.nodes;
    this.returnType = field.definition.type;
    this.parentType = field.parentType;
    this.schema = options.schema;
    this.fragments = options.fragments;
    this.rootValue = options.rootValue;
    this.operation = plan.operation;
    this.variableValues = options.variables;
  }

  get path(): Path {
    return { prev: pathOf(this.run.current), key: this.field.responseKey, typename: this.field.parentType.name };
  }
}

export class PlannedRun implements ReadRound {
  /** The object whose fields are being resolved or completed (info.path). */
  current: ObjectNode | undefined;
  private readonly root: ObjectNode;
  private readonly context: GraphQLContext;
  private readonly infos: (FieldInfo | undefined)[];
  private readonly args: (Readonly<Record<string, unknown>> | undefined)[];
  private reads: Read[] = [];
  private prefetches: { source: Source<unknown, unknown>; key: unknown }[] = [];
  // The field being resolved, while its resolver runs (where `read` files its key).
  private slotObject: ObjectNode | undefined;
  private slotField: PlanField | undefined;
  private took = false;

  constructor(
    private readonly plan: Plan,
    private readonly options: RunOptions,
  ) {
    this.context = options.context;
    this.root = new ObjectNode(plan.root, options.rootValue, undefined, '');
    this.infos = new Array<FieldInfo | undefined>(plan.fieldCount);
    this.args = new Array<Readonly<Record<string, unknown>> | undefined>(plan.fieldCount);
  }

  /** ReadRound: the field being resolved reads `key` in this round. */
  read(field: AnyReadField, key: unknown, parent: unknown, args: unknown): void {
    const object = this.slotObject;
    const planField = this.slotField;
    if (!object || !planField) throw new Error('a read outside the resolver of a planned field');
    this.reads.push({ field, key, parent, args, object, planField });
    this.took = true;
  }

  /** ReadRound: `key` is read in this round too, for a later round's field. */
  prefetch(source: Source<unknown, unknown>, key: unknown): void {
    this.prefetches.push({ source, key });
  }

  /**
   * `answered` with the answer's JSON, or `stopped` with the Fallback when graphql-js must answer
   * instead: now when nothing had to be read, else in one promise.
   */
  execute<R>(answered: (json: string) => R, stopped: (fallback: Fallback) => R | Promise<R>): R | Promise<R> {
    return this.drive(
      () => this.resolveObject(this.root),
      () => answered(answerJson(this.root)),
      stopped,
    );
  }

  /**
   * Calls the resolver of the root field at `index` (a mutation's write), as graphql-js does: its
   * value, or the promise of it. Throws what the resolver throws.
   */
  resolveRootField(index: number): unknown {
    const field = this.plan.root.fields[index] as PlanField;
    if (field.typename) return field.parentType.name;
    this.current = this.root;
    const resolve = field.definition.resolve ?? defaultFieldResolver;
    const { context } = this;
    context.round = this;
    this.writing = true;
    this.started = undefined;
    let value: unknown;
    try {
      value = resolve(this.options.rootValue, this.argsOf(field), context, this.infoOf(field));
    } finally {
      context.round = undefined;
      this.writing = false;
    }
    const { started } = this;
    this.started = undefined;
    return started ? new PendingWrite(started) : value;
  }

  /** ReadRound: the root mutation field being resolved writes with `start` (src/graphql/writeField.ts). */
  write(start: StartWrite): void {
    if (!this.writing) throw new Error('a write outside the resolver of a root mutation field');
    this.started = start;
  }

  /** The `info` of the root field at `index` (the meter counts a write's payload with it). */
  rootInfo(index: number): GraphQLResolveInfo {
    this.current = this.root;
    return this.infoOf(this.plan.root.fields[index] as PlanField);
  }

  // While a root mutation field's resolver runs: the write it hands over.
  private writing = false;
  private started: StartWrite | undefined;

  /**
   * Completes `value` as the root field at `index`, breadth-first by rounds of reads (a
   * mutation's payload, once its write is done): now when nothing had to be read, else in one
   * promise. Throws (rejects) Fallback when graphql-js must complete it instead.
   */
  completeRootField(index: number, value: unknown): void | Promise<void> {
    const field = this.plan.root.fields[index] as PlanField;
    return this.drive(() => {
      this.current = this.root;
      this.complete(this.root, field.responseKey, field, field.completion, value);
    }, ignore);
  }

  /** Puts the root field at `index` as another executor completed it (graphql-js's value for it). */
  putRootField(index: number, value: unknown): void {
    put(this.root, (this.plan.root.fields[index] as PlanField).responseKey, value ?? null);
  }

  /** The answer's JSON, from the root fields resolved and completed so far. */
  answer(): string {
    return answerJson(this.root);
  }

  /**
   * Runs `start` (which resolves fields and files their reads) and then the rounds of reads
   * until none is left, and answers `finish()`: now when nothing had to be read, else in one
   * promise that the last read of the last round settles.
   */
  private drive<T>(
    start: () => void,
    finish: () => T,
    stopped?: (fallback: Fallback) => T | Promise<T>,
  ): T | Promise<T> {
    const { context } = this;
    this.reads = [];
    this.prefetches = [];
    context.round = this;
    try {
      start();
      if (this.rounds()) {
        context.round = undefined;
        return finish();
      }
    } catch (error) {
      context.round = undefined;
      if (stopped) return stopped(asFallback(error));
      throw asFallback(error);
    }
    return new Promise<T>((resolve, reject) => {
      this.settled = {
        resolve: () => resolve(finish()),
        reject: (fallback) => {
          if (!stopped) return reject(fallback);
          try {
            resolve(stopped(fallback));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        },
      };
    });
  }

  /** Settles the promise of `drive` once a round read asynchronously (set when there is one). */
  private settled: { resolve: () => void; reject: (fallback: Fallback) => void } | undefined;

  private fail(error: unknown): void {
    this.context.round = undefined;
    this.settled?.reject(asFallback(error));
  }

  /**
   * Reads rounds while their values are known at once. True when no read is left; false when a
   * round reads: its last read to finish goes on with the next rounds (`resume`).
   */
  private rounds(): boolean {
    for (;;) {
      if (this.reads.length === 0 && this.prefetches.length === 0) return true;
      if (!this.readRound()) return false;
    }
  }

  /** After a round that read: the next rounds, then the answer (never throws: it settles the promise). */
  private resume(): void {
    try {
      if (this.rounds()) {
        this.context.round = undefined;
        this.settled?.resolve();
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private infoOf(field: PlanField): FieldInfo {
    return (this.infos[field.id] ??= new FieldInfo(this, field, this.options, this.plan));
  }

  private argsOf(field: PlanField): Readonly<Record<string, unknown>> {
    return field.args ?? (this.args[field.id] ??= argumentValues(field, this.options.variables));
  }

  /** Resolves every field of `object`, completing those whose values are there, filing the reads of the others. */
  private resolveObject(object: ObjectNode): void {
    const { fields } = object.selection;
    const { source } = object;
    for (let index = 0; index < fields.length; index += 1) {
      const field = fields[index] as PlanField;
      if (field.typename) {
        put(object, field.responseKey, field.parentType.name);
        continue;
      }
      const resolve = field.definition.resolve;
      this.current = object;
      let value: unknown;
      if (resolve === undefined) {
        // graphql-js's default resolver: the property, or what a method of that name returns.
        if ((typeof source === 'object' && source !== null) || typeof source === 'function') {
          const holder = source as Record<string, unknown>;
          const property = holder[field.fieldName];
          value =
            typeof property === 'function'
              ? (holder[field.fieldName] as (...args: unknown[]) => unknown)(
                  this.argsOf(field),
                  this.context,
                  this.infoOf(field),
                )
              : property;
        }
      } else {
        this.slotObject = object;
        this.slotField = field;
        this.took = false;
        try {
          value = resolve(source, this.argsOf(field), this.context, this.infoOf(field));
        } finally {
          this.slotObject = undefined;
          this.slotField = undefined;
        }
        if (this.took) {
          // Its value comes with the round; its key takes its place in the object now.
          put(object, field.responseKey, null);
          continue;
        }
      }
      this.complete(object, field.responseKey, field, field.completion, value);
    }
  }

  /** graphql-js's completeValue for the value of `field` at `key` of `container`. */
  private complete(
    container: Container,
    key: string | number,
    field: PlanField,
    completion: Completion,
    value: unknown,
  ): void {
    if (isPromiseLike(value)) {
      // The run stops; graphql-js reads it again, through the same loaders.
      value.then(ignore, ignore);
      throw new Fallback('async');
    }
    if (value instanceof Error) throw new Fallback('error', { cause: value });
    if (value === null || value === undefined) {
      if (completion.nonNull) throw new Fallback('null');
      put(container, key, null);
      return;
    }
    switch (completion.kind) {
      case 'leaf': {
        const serialized: unknown = completion.type.serialize(value);
        if (serialized === null || serialized === undefined) throw new Fallback('error');
        put(container, key, serialized);
        return;
      }
      case 'list': {
        if (!isIterableObject(value)) throw new Fallback('error');
        const items = Array.isArray(value) ? (value as unknown[]) : Array.from(value);
        const list = new ListNode(container, key, items.length);
        put(container, key, list.values);
        for (let i = 0; i < items.length; i += 1) this.complete(list, i, field, completion.of, items[i]);
        return;
      }
      case 'object': {
        const { type } = completion;
        if (type.isTypeOf) {
          const isTypeOf = type.isTypeOf(value, this.context, this.infoOf(field));
          if (isPromiseLike(isTypeOf)) throw new Fallback('async');
          if (!isTypeOf) throw new Fallback('error');
        }
        const object = new ObjectNode(completion.selection, value, container, key);
        put(container, key, object.data);
        this.resolveObject(object);
        return;
      }
      case 'abstract': {
        const resolveType = completion.type.resolveType ?? defaultTypeResolver;
        const typeName = resolveType(value, this.context, this.infoOf(field), completion.type);
        if (isPromiseLike(typeName)) throw new Fallback('async');
        const selection = typeof typeName === 'string' ? completion.selections.get(typeName) : undefined;
        if (!selection) throw new Fallback('error');
        if (selection.type.isTypeOf) {
          const isTypeOf = selection.type.isTypeOf(value, this.context, this.infoOf(field));
          if (isPromiseLike(isTypeOf)) throw new Fallback('async');
          if (!isTypeOf) throw new Fallback('error');
        }
        const object = new ObjectNode(selection, value, container, key);
        put(container, key, object.data);
        this.resolveObject(object);
        return;
      }
    }
  }

  /**
   * Reads the round's keys, each source's at once, and completes their fields (which files the
   * next round's reads). True when every value was known and completed at once; false when some
   * source reads: the last to finish resumes the execution from within its read's own `then`, so
   * a round costs its requests' promises and no other. A failure waits for the round's other
   * reads (they belong to this execution's cost, and graphql-js starts after them).
   */
  private readRound(): boolean {
    const groups = new Map<Source<unknown, unknown>, { keys: unknown[]; reads: (Read | undefined)[] }>();
    const groupOf = (source: Source<unknown, unknown>) => {
      let group = groups.get(source);
      if (!group) groups.set(source, (group = { keys: [], reads: [] }));
      return group;
    };
    for (const read of this.reads) {
      const group = groupOf(read.field.source);
      group.keys.push(read.key);
      group.reads.push(read);
    }
    for (const { source, key } of this.prefetches) {
      const group = groupOf(source);
      group.keys.push(key);
      group.reads.push(undefined);
    }
    this.reads = [];
    this.prefetches = [];
    // One for each source, and one for this call until every source has been asked.
    let open = groups.size + 1;
    let asking = true;
    let failure: { error: unknown } | undefined;
    const closed = (): void => {
      open -= 1;
      if (open > 0 || asking) return;
      if (failure) this.fail(failure.error);
      else this.resume();
    };
    const then: Continuation<unknown[], void> = {
      done: () => closed(),
      failed: (error) => {
        failure ??= { error };
        closed();
      },
    };
    for (const [source, group] of groups) {
      if (failure) {
        open -= 1;
        continue;
      }
      try {
        void source.all(this.context, group.keys, {
          done: (values) => {
            try {
              this.completeReads(group.reads, values);
            } catch (error) {
              then.failed(error);
              return;
            }
            then.done(values);
          },
          failed: then.failed,
        });
      } catch (error) {
        then.failed(error);
      }
    }
    asking = false;
    open -= 1;
    if (open > 0) return false;
    if (failure) throw failure.error;
    return true;
  }

  /** Gives each read of a round its value: the field's own `value`, the meter's count, then completion. */
  private completeReads(reads: readonly (Read | undefined)[], values: readonly unknown[]): void {
    const { meter } = this.options;
    for (let i = 0; i < reads.length; i += 1) {
      const read = reads[i];
      if (!read) continue; // a prefetch
      const { field, planField, object } = read;
      const found = values[i];
      const value = field.value ? field.value(found, read.key, read.parent, read.args, this.context) : found;
      this.current = object;
      meter?.resolved(value, this.infoOf(planField));
      this.complete(object, planField.responseKey, planField, planField.completion, value);
    }
  }
}

function argumentValues(field: PlanField, variables: Record<string, unknown>): Readonly<Record<string, unknown>> {
  return getArgumentValues(field.definition, field.nodes[0] as FieldNode, variables);
}

const asFallback = (error: unknown): Fallback =>
  error instanceof Fallback
    ? error
    : new Fallback(error instanceof BudgetExceededError ? 'budget' : 'error', { cause: error });
