/**
 * The dependency tags a batch of stream records changes (src/table/dependencies.ts), and when
 * the oldest of those changes was made: what every instance's response cache evicts, and where
 * its invalidation lag is measured from.
 */
import { tagsOfChange } from '../table/dependencies.js';
import { MAX_TRACEPARENTS } from '../table/limits.js';
import type { ChangeRecord } from './processor.js';

export interface ChangedTags {
  tags: string[];
  /** Epoch ms of the oldest change (ApproximateCreationDateTime); undefined when no record says. */
  changedAtMs: number | undefined;
  /**
   * The trace contexts traced writes left on the changed items (writes/placeOrder.ts), distinct,
   * at most MAX_TRACEPARENTS: the eviction's span joins those traces.
   */
  traceparents: string[];
}

const traceparentIn = (image: Record<string, unknown> | undefined): string | undefined => {
  const value = (image?.traceparent as { S?: unknown } | undefined)?.S;
  return typeof value === 'string' ? value : undefined;
};

const msOf = (value: Date | number | undefined): number | undefined =>
  value instanceof Date ? value.getTime() : typeof value === 'number' ? value * 1000 : undefined;

export function changedTagsOf(records: readonly ChangeRecord[]): ChangedTags {
  const tags = new Set<string>();
  const traceparents = new Set<string>();
  let changedAtMs: number | undefined;
  for (const record of records) {
    const change = record.dynamodb;
    if (!change) continue;
    const found = tagsOfChange(change);
    if (found.length === 0) continue;
    for (const tag of found) tags.add(tag);
    // A value the old image had too was left by an earlier write, not this change.
    const traceparent = traceparentIn(change.NewImage);
    if (traceparent && traceparent !== traceparentIn(change.OldImage) && traceparents.size < MAX_TRACEPARENTS) {
      traceparents.add(traceparent);
    }
    const at = msOf(change.ApproximateCreationDateTime);
    if (at !== undefined && (changedAtMs === undefined || at < changedAtMs)) changedAtMs = at;
  }
  return { tags: [...tags], changedAtMs, traceparents: [...traceparents] };
}
