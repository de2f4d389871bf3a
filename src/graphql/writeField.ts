/**
 * Root mutation fields, declared once and run two ways, as read fields are (reads.ts). A field
 * is its write, which hands its result to a continuation (src/db/continuation.ts), and its
 * payload, made from that result once (the request's loaders and the response cache's tags
 * updated there). The declaration is the field's resolver:
 *
 * - under graphql-js, the write's result becomes the promise of the payload;
 * - under the planned executor (a `round` in the context while it calls the resolver), the
 *   resolver hands the write to the executor, which starts it with a continuation of its own:
 *   the payload comes within the write's last request's own `then`, and the mutation costs a
 *   promise per DynamoDB request, not a chain of them per field (plan/mutation.ts).
 *
 * Either way the write runs once, when the field is resolved, in the document's order.
 */
import { asPromise, mapped } from '../db/continuation.js';
import type { Continuation } from '../db/continuation.js';
import type { GraphQLContext } from './context.js';

export interface WriteFieldSpec<A, W, R> {
  /**
   * Starts the write, handing its result (or its failure) to `then`. It may throw (an access
   * refusal, before anything is written): the field's error.
   */
  write: <X>(args: A, context: GraphQLContext, then: Continuation<NoInfer<W>, X>) => X | Promise<X>;
  /** The field's value from the write's result (run once, as the write completes). */
  payload: (written: W, args: A, context: GraphQLContext) => R;
}

/** The write of a root mutation field, started with the executor's continuation. */
export type StartWrite = (then: Continuation<unknown, void>) => unknown;

/** A write that returns a promise, as one that hands its result to `then` (one `then` more). */
export const promised = <W, X>(write: Promise<W>, then: Continuation<W, X>): Promise<X> =>
  write.then(then.done, then.failed);

/** A root mutation field as a resolver (see above). Its failures are rejections under graphql-js, never throws. */
export function writeField<A, W, R>(
  spec: WriteFieldSpec<A, W, R>,
): (root: unknown, args: A, context: GraphQLContext) => R | Promise<R> {
  return (_root, args, context) => {
    const start = <X>(then: Continuation<R, X>): X | Promise<X> => {
      try {
        return spec.write(
          args,
          context,
          mapped(then, (written: W) => spec.payload(written, args, context)),
        );
      } catch (error) {
        return then.failed(error);
      }
    };
    if (context.round) {
      context.round.write(start);
      return undefined as R;
    }
    try {
      return Promise.resolve(start(asPromise<R>()));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
}
