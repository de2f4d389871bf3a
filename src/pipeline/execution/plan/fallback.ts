/**
 * Why a planned run stops and leaves the operation to graphql-js (plannedExecutor.ts counts it),
 * and the hand-over of a root mutation field's write to the executor (mutation.ts).
 */
import type { StartWrite } from '../../../graphql/writeField.js';
import { BudgetExceededError } from '../meter.js';

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

/** What stopped a run, as the Fallback it is: the meter's refusal is `budget`, any other error `error`. */
export const asFallback = (error: unknown): Fallback =>
  error instanceof Fallback
    ? error
    : new Fallback(error instanceof BudgetExceededError ? 'budget' : 'error', { cause: error });
