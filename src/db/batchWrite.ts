/**
 * BatchWriteItem for bulk loads (seeding, benchmarks, tests): chunks of 25, UnprocessedItems
 * retried with backoff. Not atomic: never use it where a transaction is required.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../table/codecs.js';
import type { ItemKey } from '../table/keys.js';
import { backoffDelay, DEFAULT_BATCH_RETRY } from './retry.js';

const BATCH_WRITE_LIMIT = 25;

type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: ItemKey } };

async function writeRequests(
  doc: DynamoDBDocumentClient,
  tableName: string,
  requests: WriteRequest[],
  concurrency = 4,
): Promise<void> {
  const chunks: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_LIMIT) chunks.push(requests.slice(i, i + BATCH_WRITE_LIMIT));
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      let pending = chunks[next++] as WriteRequest[];
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt >= DEFAULT_BATCH_RETRY.maxAttempts) {
          throw new Error(`BatchWriteItem left ${pending.length} item(s) unprocessed after ${attempt} attempts`);
        }
        if (attempt > 0)
          await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, DEFAULT_BATCH_RETRY)));
        const result = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
        pending = (result.UnprocessedItems?.[tableName] ?? []) as WriteRequest[];
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chunks.length) }, worker));
}

export const putItems = (doc: DynamoDBDocumentClient, tableName: string, items: Item[]) =>
  writeRequests(
    doc,
    tableName,
    items.map((item) => ({ PutRequest: { Item: item } })),
  );

export const deleteItems = (doc: DynamoDBDocumentClient, tableName: string, keys: ItemKey[]) =>
  writeRequests(
    doc,
    tableName,
    keys.map((key) => ({ DeleteRequest: { Key: { PK: key.PK, SK: key.SK } } })),
  );
