/**
 * One execution of a change event for every subscription on this instance that would get the
 * same answer to it: those of one viewer (every claim of the token alike) to one operation (the
 * same document, operation name and variables). A user with a page open in several tabs, or a
 * dashboard whose panels run the same subscription, then costs one execution per event, and the
 * access rules run once for the viewer rather than once per socket. The answer is the one each
 * would have got on its own: the same viewer, arguments and event, read at the same time.
 *
 * Kept per event object, which the fan-out hands to every listener of a topic (a history's
 * entries read for a resume are objects of their own, and executed on their own): what is kept
 * goes when the event is no longer held by any subscriber's queue.
 */
import type { Viewer } from '../../auth/tokens.js';
import type { AdmittedOperation } from '../admission/admission.js';

/** What makes two subscriptions' answers to one event the same: the operation and the viewer. */
export function sharingKey(
  admitted: Pick<AdmittedOperation, 'operationName' | 'variables'> & { document: { hash: string } },
  viewer: Viewer | null,
): string {
  // Every field of the viewer, whatever it grows: a claim left out here would share one viewer's answer with another.
  const who = viewer
    ? Object.entries(viewer)
        .filter(([, value]) => value !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : 1))
    : 'anonymous';
  return JSON.stringify([admitted.document.hash, admitted.operationName, admitted.variables, who]);
}

export type SharedEvents = <T>(event: unknown, key: string, execute: () => Promise<T>) => Promise<T>;

/** `execute` runs once per (event, key); later callers get the first one's promise. */
export function createSharedEvents(): SharedEvents {
  const runs = new WeakMap<object, Map<string, Promise<unknown>>>();
  return <T>(event: unknown, key: string, execute: () => Promise<T>): Promise<T> => {
    if (typeof event !== 'object' || event === null) return execute();
    let byKey = runs.get(event);
    if (!byKey) runs.set(event, (byKey = new Map<string, Promise<unknown>>()));
    let run = byKey.get(key) as Promise<T> | undefined;
    if (!run) byKey.set(key, (run = execute()));
    return run;
  };
}
