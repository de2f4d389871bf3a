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
import type { Logger } from 'pino';
import type { Access } from '../../auth/access.js';
import type { Viewer } from '../../auth/tokens.js';
import type { RequestCost } from '../../db/capacity.js';
import type { DependencyRecord } from '../../db/dependencyRecord.js';
import type { DataSources, Loaders } from '../../db/loaders.js';
import type { GraphQLContext, LogFields } from '../../graphql/context.js';
import type { EventFanOut } from '../../graphql/eventFanOut.js';
import type { WriteRecord } from '../../graphql/writeRecord.js';
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

/** What a subscription that joined another's execution reports as its own. */
export interface OwnReport {
  requestId: string;
  logFields: LogFields;
  /** Its logger, made the first time it logs. */
  log(): Logger;
}

/**
 * The context a subscription that joined another's execution reports with: that execution's
 * (its cost, its reads, its events) under the subscription's own request id, log fields and
 * logger. It reads through to the execution's context rather than copying it: a copy read every
 * field of the context for each subscription, its getters too (the execution's log fields, and
 * its logger, a pino child made for nothing).
 */
export class JoinedContext implements GraphQLContext {
  constructor(
    private readonly execution: GraphQLContext,
    private readonly own: OwnReport,
  ) {}

  get requestId(): string {
    return this.own.requestId;
  }
  get logFields(): LogFields {
    return this.own.logFields;
  }
  get log(): Logger {
    return this.own.log();
  }
  get viewer(): Viewer | null {
    return this.execution.viewer;
  }
  get cost(): RequestCost {
    return this.execution.cost;
  }
  get reads(): DependencyRecord {
    return this.execution.reads;
  }
  get wrote(): WriteRecord {
    return this.execution.wrote;
  }
  get access(): Access {
    return this.execution.access;
  }
  get loaders(): Loaders {
    return this.execution.loaders;
  }
  get data(): DataSources {
    return this.execution.data;
  }
  get events(): EventFanOut {
    return this.execution.events;
  }
}
