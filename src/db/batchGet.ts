/**
 * BatchGetItem done right: at most 100 keys per request, duplicate keys collapsed (DynamoDB
 * refuses them), results returned in key order (DynamoDB returns them unordered), and
 * UnprocessedKeys retried with exponential backoff and full jitter. After `maxAttempts`
 * requests with keys still unprocessed it throws IncompleteBatchError: never a silent null.
 * One distinct key goes as a GetItem instead: the same read (table, key, consistency, consumed
 * capacity), which DynamoDB answers sooner than a batch of one and which has no unprocessed keys.
 */
import { BatchGetItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IncompleteBatchError } from '../errors.js';
import { noteCommand } from '../telemetry/dynamoSpans.js';
import type { Item } from '../table/codecs.js';
import { itemKeyId } from '../table/keys.js';
import type { ItemKey } from '../table/keys.js';
import { backoffDelay, DEFAULT_BATCH_RETRY } from './retry.js';
import type { RetryPolicy } from './retry.js';
import { keyAttributes, unmarshallItem } from './attributeValues.js';
import { asPromise, settle } from './continuation.js';
import type { Continuation } from './continuation.js';

export const BATCH_GET_LIMIT = 100;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Reads `keys` from `tableName`. The result has one entry per key, in the same order:
 * the item, or null where no item has that key. Strongly consistent when `consistentRead`.
 * The result goes to `then` within the request's own `then` (continuation.ts): one promise per
 * request, no async functions, since a request's reads are counted in promises as well as in
 * round trips (docs/performance.md). Without `then`, the promise has the result.
 */
export function batchGetItems<R = (Item | null)[]>(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly ItemKey[],
  { consistentRead = false, retry = DEFAULT_BATCH_RETRY }: { consistentRead?: boolean; retry?: RetryPolicy } = {},
  then: Continuation<(Item | null)[], R> = asPromise() as Continuation<(Item | null)[], R>,
): Promise<R> {
  const ids = keys.map(itemKeyId);
  const unique = new Map<string, ItemKey>();
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i] as ItemKey;
    if (!unique.has(ids[i] as string)) unique.set(ids[i] as string, { PK: key.PK, SK: key.SK });
  }
  const found = new Map<string, Item>();
  const all = [...unique.values()];
  const answer = (): (Item | null)[] => ids.map((id) => found.get(id) ?? null);
  const read = { doc, tableName, consistentRead, retry, found };
  if (all.length === 0) return Promise.resolve().then(() => settle(then, answer));
  if (all.length === 1) return readOne(read, all[0] as ItemKey, then, answer);
  if (all.length <= BATCH_GET_LIMIT) return readChunk(read, all, 0, then, answer);
  const chunks: ItemKey[][] = [];
  for (let i = 0; i < all.length; i += BATCH_GET_LIMIT) chunks.push(all.slice(i, i + BATCH_GET_LIMIT));
  // Chunks are independent: send them together, one round trip of latency for any key count.
  const none = (): undefined => undefined;
  return Promise.all(chunks.map((chunk) => readChunk(read, chunk, 0, asPromise<undefined>(), none))).then(
    () => settle(then, answer),
    then.failed,
  );
}

interface ChunkRead {
  doc: DynamoDBDocumentClient;
  tableName: string;
  consistentRead: boolean;
  retry: RetryPolicy;
  found: Map<string, Item>;
}

/** One GetItem of `key`: a batch of one key, with nothing left unprocessed to retry. */
function readOne<R>(
  read: ChunkRead,
  key: ItemKey,
  then: Continuation<(Item | null)[], R>,
  answer: () => (Item | null)[],
): Promise<R> {
  const { doc, tableName, consistentRead, found } = read;
  const command = new GetItemCommand({ TableName: tableName, Key: keyAttributes(key), ConsistentRead: consistentRead });
  return doc.send(command).then((result) => {
    if (result.Item) {
      const item = unmarshallItem(result.Item);
      found.set(itemKeyId({ PK: String(item.PK), SK: String(item.SK) }), item);
    }
    return settle(then, answer);
  }, then.failed);
}

/**
 * One BatchGetItem of `pending` (attempt `attempt`), then its unprocessed keys again after a
 * backoff; `answer` goes to `then` once every key is read.
 */
function readChunk<T, R>(
  read: ChunkRead,
  pending: ItemKey[],
  attempt: number,
  then: Continuation<T, R>,
  answer: () => T,
): Promise<R> {
  const { doc, tableName, consistentRead, retry, found } = read;
  const command = new BatchGetItemCommand({
    RequestItems: { [tableName]: { Keys: pending.map(keyAttributes), ConsistentRead: consistentRead } },
  });
  if (attempt > 0) noteCommand(command, { unprocessedRetry: attempt });
  return doc.send(command).then((result) => {
    for (const map of result.Responses?.[tableName] ?? []) {
      const item = unmarshallItem(map);
      found.set(itemKeyId({ PK: String(item.PK), SK: String(item.SK) }), item);
    }
    const unprocessed = result.UnprocessedKeys?.[tableName]?.Keys ?? [];
    if (unprocessed.length === 0) return settle(then, answer);
    const next = unprocessed.map(unmarshallItem).map((key) => ({ PK: String(key.PK), SK: String(key.SK) }));
    if (attempt + 1 >= retry.maxAttempts) return then.failed(new IncompleteBatchError(next.length, retry.maxAttempts));
    return delay(backoffDelay(attempt + 1, retry)).then(() => readChunk(read, next, attempt + 1, then, answer));
  }, then.failed);
}
