/**
 * What one execution read, as dependency tags (src/table/dependencies.ts): the response cache
 * files its answer under them. The record sits in the execution context beside the cost
 * record and is filled by the same client (`costed`, client.ts) from the requests themselves,
 * so every read is seen whichever loader made it. A point read names its item's tags from its
 * key; a Query carries the tags of the range it reads, given where the query was built
 * (`rangeQuery`). A read neither names (a Scan, a Query built without its range, an item of a
 * kind no answer reads) makes the answer uncacheable instead of silently unguarded.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { isIndexTag, itemTags } from '../table/dependencies.js';
import type { RangeRead } from '../table/entities/entity.js';
import { toAttributeMap } from './attributeValues.js';

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

/** A set that stays empty: adding to it is a bug, and throws rather than grows. */
class EmptyTags extends Set<string> {
  override add(tag: string): this {
    throw new Error(`a read recorded (${tag}) into a record that records nothing`);
  }
}

/**
 * The record of an execution whose answer can be neither stored nor public (the cache off or
 * bypassed, a POST or a signed-in request, a mutation): its reads are not recorded, and it reads
 * as uncacheable, so whatever looks at it anyway keeps the answer private and unstored. One for
 * every such execution: nothing adds to it (its client records nothing, client.ts `costed`), and
 * its tags refuse an addition, so one execution's reads can never reach another's record.
 */
export const NOT_RECORDED: DependencyRecord = Object.freeze({
  tags: new EmptyTags(),
  uncacheable: 'reads not recorded',
  readIndex: false,
});

const RANGE = Symbol('tablegraph.range');

/**
 * A Query of one declared range (src/table/entities/ranges.ts), carrying what a read of the
 * range depends on as a value: what the dependency record files the answer under, without
 * reading the key condition. `input` is in the document client's form; the command is the
 * low-level one (its values marshalled here), whose output's items the reader converts itself
 * (attributeValues.ts).
 */
export function rangeQuery(
  input: Omit<QueryCommandInput, 'KeyConditions' | 'QueryFilter'>,
  range: RangeRead | undefined,
): QueryCommand {
  const { ExpressionAttributeValues: values, ExclusiveStartKey: startKey, ...rest } = input;
  const command = new QueryCommand({
    ...rest,
    ...(values ? { ExpressionAttributeValues: toAttributeMap(values) } : {}),
    ...(startKey ? { ExclusiveStartKey: toAttributeMap(startKey) } : {}),
  });
  // Without its range (a bug), the Query makes its answer uncacheable, never unguarded.
  if (range) Object.defineProperty(command, RANGE, { value: range });
  return command;
}

/** The range a Query command carries (rangeQuery), if any. */
const rangeOf = (command: object): RangeRead | undefined => (command as { [RANGE]?: RangeRead })[RANGE];

/** A document-client value (a string) or a low-level AttributeValue (`{ S }`). */
const text = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  const s = (value as { S?: unknown } | undefined)?.S;
  return typeof s === 'string' ? s : undefined;
};

function tagsOfKey(key: unknown): readonly string[] | undefined {
  const k = key as Record<string, unknown> | undefined;
  const PK = text(k?.PK);
  const SK = text(k?.SK);
  return PK === undefined || SK === undefined ? undefined : itemTags({ PK, SK });
}

/** The tags of each thing a read command (by DynamoDB operation name) asked for; undefined for what none names. */
function tagsOfRead(operation: string, command: object): (readonly string[] | undefined)[] {
  const input = ((command as { input?: unknown }).input ?? {}) as Record<string, unknown>;
  switch (operation) {
    case 'GetItem':
      return [tagsOfKey(input.Key)];
    case 'BatchGetItem':
      return Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap((request) =>
        (request.Keys ?? []).map(tagsOfKey),
      );
    case 'TransactGetItems':
      return ((input.TransactItems ?? []) as { Get?: { Key?: unknown } }[]).map((item) => tagsOfKey(item.Get?.Key));
    case 'Query':
      return [rangeOf(command)?.tags];
    default:
      return [undefined]; // a Scan reads everything: nothing names it
  }
}

/** Adds what the read `operation` (the command `command`) asked for to `record`. */
export function recordRead(record: DependencyRecord, operation: string, command: object): void {
  if (record.uncacheable) return;
  for (const tags of tagsOfRead(operation, command)) {
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
 * Adds the item tags of what a Query of an index range returned, then hands its output on. A
 * page's range tag already covers its items; their own tags let a write that knows only an
 * item's key (what it touched) evict the pages that show the item. A range of the table's own
 * key needs none: the key of every item in it names the range.
 */
export function recordItems<T>(record: DependencyRecord, command: object, output: T): T {
  if (!rangeOf(command)?.byIndex) return output;
  const items = (output as { Items?: Record<string, unknown>[] } | undefined)?.Items ?? [];
  for (const item of items) for (const tag of tagsOfKey(item) ?? []) record.tags.add(tag);
  if (record.tags.size > MAX_DEPENDENCY_TAGS) record.uncacheable = 'too many dependencies';
  return output;
}
