/**
 * One execution of a plan, breadth-first by rounds of reads (rounds.ts). The executor resolves
 * every field it can without waiting (in graphql-js's order: an object's fields one after the
 * other, a synchronous value's own fields at once), calling the schema's resolvers with one `info`
 * per field of the plan, shared by all the objects it resolves (fieldInfo.ts). A field that reads
 * (src/graphql/reads.ts) adds its key to the round instead of reading; the values read complete
 * their fields, which makes the next round. The answer is written as JSON at the end (answer.ts).
 *
 * The executor answers only what it answers exactly as graphql-js would. Anything else stops the
 * run with a `Fallback` naming why (fallback.ts), and graphql-js executes the operation instead,
 * on the same loaders (plannedExecutor.ts): a resolver that returns a promise (a field that reads
 * without being declared as such), any error (an access refusal, a failed read, a value graphql-js
 * would refuse), a null in a non-null field (graphql-js nulls the parent and reports the error),
 * and the operation meter stopping the run.
 */
import { defaultFieldResolver, defaultTypeResolver } from 'graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { StartWrite } from '../../../graphql/writeField.js';
import type { OperationMeter } from '../meter.js';
import { answerJson, ListNode, ObjectNode, put } from './answer.js';
import type { Container } from './answer.js';
import type { Completion, Plan, PlanField } from './plan.js';
import { isPromiseLike } from '../documentCache.js';
import { argumentValues, FieldInfo } from './fieldInfo.js';
import type { InfoOptions } from './fieldInfo.js';
import { Fallback, PendingWrite } from './fallback.js';
import type { GraphQLContext } from '../../../graphql/context.js';
import { Rounds } from './rounds.js';
import type { Read } from './rounds.js';

export { Fallback, PendingWrite } from './fallback.js';
export type { RunFallback } from './fallback.js';

const ignore = (): void => undefined;

const isIterableObject = (value: unknown): value is Iterable<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function';

export interface RunOptions extends InfoOptions {
  context: GraphQLContext;
  meter: OperationMeter | undefined;
}

export class PlannedRun extends Rounds {
  /** The object whose fields are being resolved or completed (info.path). */
  current: ObjectNode | undefined;
  private readonly root: ObjectNode;
  private readonly infos: (FieldInfo | undefined)[];
  private readonly args: (Readonly<Record<string, unknown>> | undefined)[];

  constructor(
    private readonly plan: Plan,
    private readonly options: RunOptions,
  ) {
    super(options.context);
    this.root = new ObjectNode(plan.root, options.rootValue, undefined, '');
    this.infos = new Array<FieldInfo | undefined>(plan.fieldCount);
    this.args = new Array<Readonly<Record<string, unknown>> | undefined>(plan.fieldCount);
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

  /** Gives each read of a round its value: the field's own `value`, the meter's count, then completion. */
  protected completeReads(reads: readonly (Read | undefined)[], values: readonly unknown[]): void {
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
