/**
 * BatchGetItem done right: at most 100 keys per request, duplicate keys collapsed (DynamoDB
 * refuses them), results returned in key order (DynamoDB returns them unordered), and
 * UnprocessedKeys retried with exponential backoff and full jitter. After `maxAttempts`
 * requests with keys still unprocessed it throws IncompleteBatchError: never a silent null.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IncompleteBatchError } from '../errors.js';
import { noteCommand } from '../telemetry/dynamoSpans.js';
import type { Item } from '../table/codecs.js';
import { itemKeyId } from '../table/keys.js';
import type { ItemKey } from '../table/keys.js';
import { backoffDelay, DEFAULT_BATCH_RETRY } from './retry.js';
import type { RetryPolicy } from './retry.js';

export const BATCH_GET_LIMIT = 100;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Reads `keys` from `tableName`. The result has one entry per key, in the same order:
 * the item, or null where no item has that key. Strongly consistent when `consistentRead`.
 */
export async function batchGetItems(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly ItemKey[],
  { consistentRead = false, retry = DEFAULT_BATCH_RETRY }: { consistentRead?: boolean; retry?: RetryPolicy } = {},
): Promise<(Item | null)[]> {
  const unique = new Map<string, ItemKey>();
  for (const key of keys) unique.set(itemKeyId(key), { PK: key.PK, SK: key.SK });
  const found = new Map<string, Item>();
  const all = [...unique.values()];
  const chunks: ItemKey[][] = [];
  for (let i = 0; i < all.length; i += BATCH_GET_LIMIT) chunks.push(all.slice(i, i + BATCH_GET_LIMIT));
  // Chunks are independent: send them together, one round trip of latency for any key count.
  await Promise.all(chunks.map((chunk) => readChunk(doc, tableName, chunk, consistentRead, retry, found)));
  return keys.map((key) => found.get(itemKeyId(key)) ?? null);
}

async function readChunk(
  doc: DynamoDBDocumentClient,
  tableName: string,
  chunk: ItemKey[],
  consistentRead: boolean,
  retry: RetryPolicy,
  found: Map<string, Item>,
): Promise<void> {
  let pending: ItemKey[] = chunk;
  for (let attempt = 0; attempt < retry.maxAttempts; attempt++) {
    if (attempt > 0) await delay(backoffDelay(attempt, retry));
    const command = new BatchGetCommand({
      RequestItems: { [tableName]: { Keys: pending, ConsistentRead: consistentRead } },
    });
    if (attempt > 0) noteCommand(command, { unprocessedRetry: attempt });
    const result = await doc.send(command);
    for (const item of result.Responses?.[tableName] ?? []) {
      found.set(itemKeyId({ PK: String(item.PK), SK: String(item.SK) }), item);
    }
    const unprocessed = result.UnprocessedKeys?.[tableName]?.Keys ?? [];
    if (unprocessed.length === 0) return;
    pending = unprocessed.map((key) => ({ PK: String(key.PK), SK: String(key.SK) }));
  }
  throw new IncompleteBatchError(pending.length, retry.maxAttempts);
}
