/**
 * The dependency tags a batch of stream records changes (src/table/dependencies.ts), and when
 * the oldest of those changes was made: what every instance's response cache evicts, and where
 * its invalidation lag is measured from.
 */
import { tagsOfChange } from '../table/dependencies.js';
import type { ChangeRecord } from './processor.js';

export interface ChangedTags {
  tags: string[];
  /** Epoch ms of the oldest change (ApproximateCreationDateTime); undefined when no record says. */
  changedAtMs: number | undefined;
}

const msOf = (value: Date | number | undefined): number | undefined =>
  value instanceof Date ? value.getTime() : typeof value === 'number' ? value * 1000 : undefined;

export function changedTagsOf(records: readonly ChangeRecord[]): ChangedTags {
  const tags = new Set<string>();
  let changedAtMs: number | undefined;
  for (const record of records) {
    const change = record.dynamodb;
    if (!change) continue;
    const found = tagsOfChange(change);
    if (found.length === 0) continue;
    for (const tag of found) tags.add(tag);
    const at = msOf(change.ApproximateCreationDateTime);
    if (at !== undefined && (changedAtMs === undefined || at < changedAtMs)) changedAtMs = at;
  }
  return { tags: [...tags], changedAtMs };
}
