/**
 * Fields that read, declared once and run two ways. A field that reads from DynamoDB is declared
 * with `readField`: the key it reads (from its parent and arguments, where the argument checks
 * and the access rules that need no data run), the source that reads such keys, and how the
 * value it read becomes the field's value. The declaration is the field's resolver:
 *
 * - under graphql-js, per parent: it reads its key through the source's `one` (the request's
 *   loaders, which batch the keys of one tick into one request);
 * - under the planned executor (src/pipeline/execution/plan/), per round: the executor sets a `ReadRound` in
 *   the context while it resolves the fields it can, the resolver adds its key to the round
 *   instead of reading, and the executor reads every key of the round with the source's `all`
 *   (one promise per round, not one per field), then hands each value to the same `value`.
 *
 * So what a field reads and how its value is made is written once, and graphql-js, the oracle of
 * the planned executor, runs exactly that.
 */
import { isNonNullType } from 'graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { Continuation } from '../db/continuation.js';
import type { GraphQLContext } from './context.js';
import type { StartWrite } from './writeField.js';

/** One kind of read: a key at a time (graphql-js's resolvers) or a round's keys at once (the planned executor). */
export interface Source<K, V> {
  readonly name: string;
  /** Reads `key` through the request's loaders (batched per tick by them). */
  one(context: GraphQLContext, key: K): Promise<V>;
  /**
   * Reads every key at once and hands the values, in key order, or the failure, to `then`: now
   * when all are known, else within the read's own last `then` (one promise per request).
   */
  all<R>(context: GraphQLContext, keys: readonly K[], then: Continuation<V[], R>): R | Promise<R>;
}

/** A field's value that needs no read (no viewer, a count known already): `key` returns it instead of a key. */
export class Known<T> {
  constructor(readonly value: T) {}
}

export interface ReadFieldSpec<P, A, K, V, R> {
  source: Source<K, V>;
  /**
   * The key this field reads for `parent`, or its value when it reads nothing. It may throw (a
   * refused argument, UNAUTHENTICATED): the field's error, before anything is read.
   */
  key: (parent: P, args: A, context: GraphQLContext, info: GraphQLResolveInfo) => K | Known<R>;
  /** The field's value from what was read (the value itself when absent). */
  value?: (read: V, key: K, parent: P, args: A, context: GraphQLContext) => R;
}

/** A read field of any types, as the planned executor holds it. */
export type AnyReadField = ReadFieldSpec<unknown, unknown, unknown, unknown, unknown>;

/**
 * The reads the planned executor collects while it resolves a round's fields (the context's
 * `round`, unset otherwise).
 */
export interface ReadRound {
  /** The field being resolved reads `key`: its value comes when the round's reads are done. */
  read(
    field: ReadFieldSpec<unknown, unknown, unknown, unknown, unknown>,
    key: unknown,
    parent: unknown,
    args: unknown,
  ): void;
  /** Reads `key` in this round too, for a field a later round resolves (a count beside its page). */
  prefetch(source: Source<unknown, unknown>, key: unknown): void;
  /** The root mutation field being resolved writes with `start` (writeField.ts): the executor starts it. */
  write(start: StartWrite): void;
}

const ignore = (): void => undefined;

/** Starts reading `key` now (with the round, under the planned executor): a later field finds it read. */
export function prefetch<K, V>(context: GraphQLContext, source: Source<K, V>, key: K): void {
  if (context.round) context.round.prefetch(source, key);
  else source.one(context, key).catch(ignore);
}

/**
 * A field that reads, as a resolver. Under graphql-js a non-null field's failures are
 * rejections, never throws: a non-null field that throws synchronously makes graphql-js abandon
 * its siblings' pending results, whose rejections would then go unhandled. Under the planned
 * executor (a `round` in the context) it returns nothing, the executor giving the field its value
 * after the round's reads, and a refusal is thrown: the executor stops on it (an `error`, not a
 * promise it did not expect).
 */
export function readField<P, A, K, V, R = V>(
  spec: ReadFieldSpec<P, A, K, V, R>,
): (parent: P, args: A, context: GraphQLContext, info: GraphQLResolveInfo) => R | Promise<R> {
  const { source, value } = spec;
  const resolve = (parent: P, args: A, context: GraphQLContext, info: GraphQLResolveInfo): R | Promise<R> => {
    const key = spec.key(parent, args, context, info);
    if (key instanceof Known) return key.value;
    if (context.round) {
      context.round.read(spec as unknown as AnyReadField, key, parent, args);
      return undefined as R;
    }
    const read = source.one(context, key);
    return value ? read.then((found) => value(found, key, parent, args, context)) : (read as unknown as Promise<R>);
  };
  return (parent, args, context, info) => {
    if (context.round || !isNonNullType(info.returnType)) return resolve(parent, args, context, info);
    try {
      return resolve(parent, args, context, info);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
}
