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
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BadUserInputError } from '../errors.js';
import type { Item } from '../table/codecs.js';
import type { CursorCodec, CursorKey } from './cursor.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/** Query requests one page may take (more than one only if DynamoDB's 1 MB limit cuts a read short). */
const MAX_READS_PER_PAGE = 5;

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
  /** The connection's natural order (the `first` direction) is ascending sort key order. */
  ascending: boolean;
  /** Strongly consistent reads (table and LSI only; DynamoDB refuses them on a GSI). */
  consistentRead?: boolean;
  decode: (item: Item) => T;
}

interface PagePlan {
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

/** Reads one page of `query`. Costs one Query request in every case DynamoDB does not cut short. */
export async function readPage<T>(
  doc: DynamoDBDocumentClient,
  query: PageQuery<T>,
  args: ConnectionArgs,
  codec: CursorCodec,
): Promise<{ page: Page<T>; items: Item[] }> {
  const plan = planPage(args, query, codec);
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined = plan.cursor;
  let reads = 0;
  do {
    const result = await doc.send(
      new QueryCommand({
        TableName: query.tableName,
        IndexName: query.indexName,
        KeyConditionExpression: query.keyConditionExpression,
        ExpressionAttributeValues: query.expressionAttributeValues,
        ScanIndexForward: plan.backward ? !query.ascending : query.ascending,
        ConsistentRead: query.consistentRead,
        ExclusiveStartKey: startKey,
        Limit: plan.size + 1 - items.length,
      }),
    );
    reads += 1;
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (items.length <= plan.size && startKey && reads < MAX_READS_PER_PAGE);

  // Out of budget with the partition unfinished: more may exist, so say so.
  const hasMore =
    items.length > plan.size || (items.length < plan.size + 1 && startKey !== undefined && reads >= MAX_READS_PER_PAGE);
  const pageItems = items.slice(0, plan.size);
  if (plan.backward) pageItems.reverse();
  const edges = pageItems.map((item) => ({
    cursor: codec.encode(query.connection, pickKey(item, query.keyAttributes)),
    node: query.decode(item),
  }));
  const cursorGiven = plan.cursor !== undefined;
  return {
    items: pageItems,
    page: {
      edges,
      pageInfo: {
        hasNextPage: plan.backward ? cursorGiven : hasMore,
        hasPreviousPage: plan.backward ? hasMore : cursorGiven,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
    },
  };
}

function pickKey(item: Item, attributes: readonly string[]): CursorKey {
  const key: CursorKey = {};
  for (const name of attributes) key[name] = String(item[name]);
  return key;
}
