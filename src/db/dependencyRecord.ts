/**
 * What one execution read, as dependency tags (src/table/dependencies.ts): the response cache
 * files its answer under them. The record sits in the execution context beside the cost
 * record and is filled by the same client (`costed`, client.ts) from the requests themselves,
 * so every read is seen whichever loader made it, and a read of an access pattern the tags do
 * not know yet (a new index) makes the answer uncacheable instead of silently unguarded.
 */
import { isIndexTag, itemTag, tagsOfRead } from '../table/dependencies.js';
import type { ReadTarget } from '../table/dependencies.js';

/** Tags one answer may depend on; past this it is not cached (a huge answer is a poor entry anyway). */
export const MAX_DEPENDENCY_TAGS = 2000;

export interface DependencyRecord {
  tags: Set<string>;
  /** Why the answer must not be cached (a read no tag names, too many tags); undefined while it may. */
  uncacheable: string | undefined;
  /** Some read came from an eventually consistent global index. */
  readIndex: boolean;
}

export const newDependencyRecord = (): DependencyRecord => ({
  tags: new Set(),
  uncacheable: undefined,
  readIndex: false,
});

/** A document-client value (a string) or a low-level AttributeValue (`{ S }`). */
const text = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  const s = (value as { S?: unknown } | undefined)?.S;
  return typeof s === 'string' ? s : undefined;
};

function keyOf(key: unknown): ReadTarget | undefined {
  const k = key as Record<string, unknown> | undefined;
  const PK = text(k?.PK);
  const SK = text(k?.SK);
  return PK === undefined || SK === undefined ? undefined : { kind: 'item', key: { PK, SK } };
}

/** `PK = :pk AND …` / `#pk = :pk AND …`: the partition key's value. */
function queryOf(input: QueryInput): ReadTarget | undefined {
  const match = /^\s*\(?\s*(#?\w+)\s*=\s*(:\w+)/.exec(input.KeyConditionExpression ?? '');
  if (!match) return undefined;
  const value = text(input.ExpressionAttributeValues?.[match[2] as string]);
  return value === undefined ? undefined : { kind: 'query', indexName: input.IndexName, partitionKey: value };
}

interface QueryInput {
  IndexName?: string;
  KeyConditionExpression?: string;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** What a read command (by DynamoDB operation name) asked for; undefined for what cannot be named. */
function targetsOf(operation: string, input: Record<string, unknown>): (ReadTarget | undefined)[] {
  switch (operation) {
    case 'GetItem':
      return [keyOf(input.Key)];
    case 'BatchGetItem':
      return Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap((request) =>
        (request.Keys ?? []).map(keyOf),
      );
    case 'TransactGetItems':
      return ((input.TransactItems ?? []) as { Get?: { Key?: unknown } }[]).map((item) => keyOf(item.Get?.Key));
    case 'Query':
      return [queryOf(input)];
    default:
      return [undefined]; // a Scan reads everything: nothing names it
  }
}

/** Adds what the read `operation` with `input` asked for to `record`. */
export function recordRead(record: DependencyRecord, operation: string, input: unknown): void {
  if (record.uncacheable) return;
  for (const target of targetsOf(operation, (input ?? {}) as Record<string, unknown>)) {
    const tags = target && tagsOfRead(target);
    if (!tags) {
      record.uncacheable = `${operation} of a range no dependency tag names`;
      return;
    }
    for (const tag of tags) {
      record.tags.add(tag);
      if (isIndexTag(tag)) record.readIndex = true;
    }
  }
  if (record.tags.size > MAX_DEPENDENCY_TAGS) record.uncacheable = 'too many dependencies';
}

/**
 * Adds the item tags of what a Query returned, then hands its output on. A page's range tag
 * already covers its items; their own tags let a write that knows only an item's key (what it
 * touched) evict the pages that show the item.
 */
export function recordItems<T>(record: DependencyRecord, output: T): T {
  const items = (output as { Items?: Record<string, unknown>[] } | undefined)?.Items ?? [];
  for (const item of items) {
    const target = keyOf(item);
    const tag = target?.kind === 'item' ? itemTag(target.key) : undefined;
    if (tag) record.tags.add(tag);
  }
  if (record.tags.size > MAX_DEPENDENCY_TAGS) record.uncacheable = 'too many dependencies';
  return output;
}
