/**
 * The rounds of reads of a planned run. While the run resolves the fields it can, a field that
 * reads files its key here (`read`, the context's `ReadRound`) instead of reading; when nothing
 * more can be resolved, the round's keys are read, each source's at once (every node of the round
 * in one BatchGetItem, keys deduplicated and those already read skipped, item collections merged
 * by the lookahead's read as ever), and the values read complete their fields (`completeReads`,
 * the run's), which files the next round. One promise per round, not one per field: the last
 * read of a round to finish goes on with the next rounds from within its own `then`.
 */
import type { GraphQLContext } from '../../../graphql/context.js';
import type { Continuation } from '../../../db/continuation.js';
import type { AnyReadField, ReadRound, Source } from '../../../graphql/reads.js';
import type { StartWrite } from '../../../graphql/writeField.js';
import type { ObjectNode } from './answer.js';
import type { PlanField } from './plan.js';
import { asFallback } from './fallback.js';
import type { Fallback } from './fallback.js';

/** A field's read, waiting for its round. */
export interface Read {
  field: AnyReadField;
  key: unknown;
  parent: unknown;
  args: unknown;
  object: ObjectNode;
  planField: PlanField;
}

export abstract class Rounds implements ReadRound {
  private reads: Read[] = [];
  private prefetches: { source: Source<unknown, unknown>; key: unknown }[] = [];
  // The field being resolved, while its resolver runs (where `read` files its key).
  protected slotObject: ObjectNode | undefined;
  protected slotField: PlanField | undefined;
  /** Whether the resolver running in the slot filed a read. */
  protected took = false;
  /** Settles the promise of `drive` once a round read asynchronously (set when there is one). */
  private settled: { resolve: () => void; reject: (fallback: Fallback) => void } | undefined;

  constructor(protected readonly context: GraphQLContext) {}

  /** Gives each read of a round its value (`undefined` for a prefetch) and completes its field. */
  protected abstract completeReads(reads: readonly (Read | undefined)[], values: readonly unknown[]): void;

  abstract write(start: StartWrite): void;

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
   * Runs `start` (which resolves fields and files their reads) and then the rounds of reads
   * until none is left, and answers `finish()`: now when nothing had to be read, else in one
   * promise that the last read of the last round settles.
   */
  protected drive<T>(
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
}
