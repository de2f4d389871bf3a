/**
 * Relay cursor connections over DynamoDB Query pagination.
 *
 * - `first/after` reads in the connection's natural order from ExclusiveStartKey = after;
 *   `last/before` reads the opposite way from ExclusiveStartKey = before, then reverses.
 * - Each read asks for one item more than the page: a LastEvaluatedKey alone does not prove
 *   that another item exists, the extra item does.
 * - Every edge's cursor is its item's own key (table key plus the index key when reading an
 *   index), signed and bound to the connection by CursorCodec.
 * - hasPreviousPage on a forward page (and hasNextPage on a backward page) is `true` exactly
 *   when a cursor was given: the cursor's own item lies on that side. This is what the Relay
 *   spec allows servers that cannot count backwards cheaply.
 * - A FilterExpression is applied by DynamoDB after `Limit`, so a filtered page keeps reading
 *   until it is full or the partition ends, within READ_BUDGET. A page the budget cuts short
 *   says `hasNextPage` (or `hasPreviousPage` backwards) honestly, and its end cursor (start
 *   cursor backwards) is the position where reading stopped, not its last edge: the next page
 *   resumes exactly there, even when this one has no edges at all.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BadUserInputError } from '../errors.js';
import type { Item } from '../table/codecs.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../table/limits.js';
import type { CursorCodec, CursorKey } from './cursor.js';
import { unmarshallItem } from './attributeValues.js';
import { asPromise, settle } from './continuation.js';
import type { Continuation } from './continuation.js';
import { rangeQuery } from './dependencyRecord.js';
import type { RangeRead } from '../table/entities/entity.js';

/**
 * What one page may read: Query requests (more than one only for a filter, or when DynamoDB's
 * 1 MB limit cuts a read short) and items evaluated (what a filter may skip, bounding the read
 * capacity of one page whatever the data).
 */
export const READ_BUDGET = { requests: 5, items: 500 } as const;

export interface ConnectionArgs {
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}

export interface Page<T> {
  edges: Edge<T>[];
  pageInfo: PageInfo;
}

/** One connection: a key-range Query and how to read its items. */
export interface PageQuery<T> {
  /** Identifies the connection (e.g. `User.orders:alice`); cursors are bound to it. */
  connection: string;
  tableName: string;
  indexName?: string | undefined;
  /** The attributes that make up an item's position: table key plus the index's key. */
  keyAttributes: readonly string[];
  keyConditionExpression: string;
  expressionAttributeValues: Record<string, unknown>;
  /** What a read of the range the key condition reads depends on (src/table/entities/ranges.ts). */
  range: RangeRead;
  /** The connection's natural order (the `first` direction) is ascending sort key order. */
  ascending: boolean;
  /** Strongly consistent reads (table and LSI only; DynamoDB refuses them on a GSI). */
  consistentRead?: boolean;
  /** A FilterExpression (applied by DynamoDB after Limit, so pages fill within READ_BUDGET). */
  filter?: { expression: string; values: Record<string, unknown> } | undefined;
  decode: (item: Item) => T;
}

export interface PagePlan {
  size: number;
  backward: boolean;
  cursor: CursorKey | undefined;
}

function checkSize(name: 'first' | 'last', value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_PAGE_SIZE) {
    throw new BadUserInputError(`Argument "${name}" must be an integer from 0 to ${MAX_PAGE_SIZE}`, name);
  }
  return value;
}

/**
 * Validates connection arguments. Refused with BAD_USER_INPUT: first with last, after with
 * before, first with before, last with after (each pair names two directions at once), sizes
 * that are negative or above MAX_PAGE_SIZE, and cursors this connection did not issue.
 */
export function planPage(
  args: ConnectionArgs,
  query: Pick<PageQuery<unknown>, 'connection' | 'keyAttributes'>,
  codec: CursorCodec,
): PagePlan {
  const { first, after, last, before } = args;
  if (first != null && last != null)
    throw new BadUserInputError('Passing both "first" and "last" is not supported', 'last');
  if (after != null && before != null) {
    throw new BadUserInputError('Passing both "after" and "before" is not supported', 'before');
  }
  if (first != null && before != null)
    throw new BadUserInputError('Use "before" with "last", not with "first"', 'before');
  if (last != null && after != null) throw new BadUserInputError('Use "after" with "first", not with "last"', 'after');
  const backward = last != null || before != null;
  let size = DEFAULT_PAGE_SIZE;
  if (first != null) size = checkSize('first', first);
  if (last != null) size = checkSize('last', last);
  const rawCursor = backward ? before : after;
  const cursor =
    rawCursor != null
      ? codec.decode(query.connection, rawCursor, query.keyAttributes, backward ? 'before' : 'after')
      : undefined;
  return { size, backward, cursor };
}

/**
 * Reads one page of `query`. Costs one Query request in every case DynamoDB does not cut short and
 * no filter drops items. The page goes to `then` within the last Query's own `then`
 * (continuation.ts), refused arguments (planPage) to its `failed`: one promise per Query, no
 * async function, since a request's reads are counted in promises too (docs/performance.md).
 * Without `then`, the promise has the page, or rejects.
 */
export function readPage<T, R = { page: Page<T>; items: Item[] }>(
  doc: DynamoDBDocumentClient,
  query: PageQuery<T>,
  args: ConnectionArgs,
  codec: CursorCodec,
  then: Continuation<{ page: Page<T>; items: Item[] }, R> = asPromise() as Continuation<
    { page: Page<T>; items: Item[] },
    R
  >,
): Promise<R> {
  let plan: PagePlan;
  try {
    plan = planPage(args, query, codec);
  } catch (error) {
    return Promise.resolve().then(() => then.failed(error));
  }
  const wanted = plan.size + 1;
  const items: Item[] = [];
  let reads = 0;
  let evaluated = 0;
  const read = (startKey: Record<string, unknown> | undefined): Promise<R> =>
    doc
      .send(
        rangeQuery(
          {
            TableName: query.tableName,
            IndexName: query.indexName,
            KeyConditionExpression: query.keyConditionExpression,
            FilterExpression: query.filter?.expression,
            ExpressionAttributeValues: { ...query.expressionAttributeValues, ...query.filter?.values },
            ScanIndexForward: plan.backward ? !query.ascending : query.ascending,
            ConsistentRead: query.consistentRead,
            ExclusiveStartKey: startKey,
            Limit: nextLimit(wanted - items.length, evaluated, items.length, READ_BUDGET.items - evaluated),
          },
          query.range,
        ),
      )
      .then((result) => {
        reads += 1;
        evaluated += result.ScannedCount ?? result.Items?.length ?? 0;
        for (const map of result.Items ?? []) items.push(unmarshallItem(map));
        const next = result.LastEvaluatedKey && unmarshallItem(result.LastEvaluatedKey);
        if (items.length < wanted && next && reads < READ_BUDGET.requests && evaluated < READ_BUDGET.items) {
          return read(next);
        }
        // Out of budget with the partition unfinished: more may exist, so say so, and resume here.
        const cutShort = items.length < wanted && next !== undefined;
        const hasMore = items.length > plan.size || cutShort;
        return settle(then, () => buildPage(items, plan, hasMore, query, codec, cutShort ? next : undefined));
      }, then.failed);
  return read(plan.cursor);
}

/**
 * The page of `plan` from `items` as read (in read order, possibly one more than the page):
 * edges with their cursors, and pageInfo. `hasMore` says whether items lie beyond the page in
 * the read direction; `resumeKey` is where a read cut short stopped (the page's end cursor then).
 * Shared by readPage, the fused user + orders read (userCollection.ts) and the merge of a
 * sharded index (shardedPages.ts), so all build the same page from the same items.
 */
export function buildPage<T>(
  items: readonly Item[],
  plan: PagePlan,
  hasMore: boolean,
  query: Pick<PageQuery<T>, 'connection' | 'keyAttributes' | 'decode'>,
  codec: CursorCodec,
  resumeKey?: Record<string, unknown>,
): { page: Page<T>; items: Item[] } {
  const pageItems = items.slice(0, plan.size);
  const resume = resumeKey ? new LazyCursor(resumeKey, query, codec) : null;
  if (plan.backward) pageItems.reverse();
  const edges = pageItems.map((item) => new LazyEdge(new LazyCursor(item, query, codec), query.decode(item)));
  const cursorGiven = plan.cursor !== undefined;
  return {
    items: pageItems,
    page: {
      edges,
      pageInfo: new LazyPageInfo(
        plan.backward ? cursorGiven : hasMore,
        plan.backward ? hasMore : cursorGiven,
        (plan.backward ? resume : null) ?? edges[0]?.lazyCursor ?? null,
        (plan.backward ? null : resume) ?? edges.at(-1)?.lazyCursor ?? null,
      ),
    },
  };
}

/**
 * A cursor signed when first read (an HMAC each: a page that selects `node` or `nodes` only
 * never reads one), then kept.
 */
class LazyCursor {
  #value: string | undefined;

  constructor(
    private readonly key: Record<string, unknown>,
    private readonly query: Pick<PageQuery<unknown>, 'connection' | 'keyAttributes'>,
    private readonly codec: CursorCodec,
  ) {}

  get value(): string {
    this.#value ??= this.codec.encode(this.query.connection, pickKey(this.key, this.query.keyAttributes));
    return this.#value;
  }
}

/**
 * The edges and pageInfo hold their cursors as getters on the prototype: reading them is what
 * graphql-js and the resolvers do; spreading or serializing one would not show them.
 */
class LazyEdge<T> implements Edge<T> {
  constructor(
    readonly lazyCursor: LazyCursor,
    readonly node: T,
  ) {}

  get cursor(): string {
    return this.lazyCursor.value;
  }
}

class LazyPageInfo implements PageInfo {
  constructor(
    readonly hasNextPage: boolean,
    readonly hasPreviousPage: boolean,
    private readonly start: LazyCursor | null,
    private readonly end: LazyCursor | null,
  ) {}

  get startCursor(): string | null {
    return this.start?.value ?? null;
  }

  get endCursor(): string | null {
    return this.end?.value ?? null;
  }
}

/**
 * The Limit of the next Query: what is still wanted, scaled by how many items the filter has
 * let through so far (a filter that kept 1 in 10 needs about ten times as many), and never
 * more than the budget has left.
 */
export function nextLimit(wanted: number, evaluated: number, kept: number, budgetLeft: number): number {
  const ratio = evaluated === 0 ? 1 : evaluated / Math.max(kept, 1);
  return Math.max(1, Math.min(budgetLeft, Math.ceil(wanted * ratio)));
}

export function pickKey(item: Item, attributes: readonly string[]): CursorKey {
  const key: CursorKey = {};
  for (const name of attributes) key[name] = String(item[name]);
  return key;
}
