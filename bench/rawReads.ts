/**
 * How the raw chain (rawOperations.ts) reads table `table`: a Query, a GetItem and BatchGetItem in
 * chunks of 100 with UnprocessedKeys retried, as the server's reads send them (low-level commands)
 * and converted by the reads' own unmarshalling (src/db/attributeValues.ts).
 */
import { BatchGetItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { keyAttributes, unmarshallItem, unmarshallItems } from '../src/db/attributeValues.js';
import { rangeQuery } from '../src/db/dependencyRecord.js';
import type { Item } from '../src/table/codecs.js';
import { itemKeyId } from '../src/table/keys.js';
import type { ItemKey } from '../src/table/keys.js';

/** The raw chain's reads of table `table`. */
export function rawReads(table: string) {
  /** A Query's items (and its LastEvaluatedKey), as the server's page reads send and convert them. */
  async function query(doc: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'KeyConditions' | 'QueryFilter'>) {
    const result = await doc.send(rangeQuery(input, undefined));
    return { Items: unmarshallItems(result.Items) };
  }

  /** One item by key (GetItem), converted the same way. */
  async function getItem(doc: DynamoDBDocumentClient, key: ItemKey): Promise<Item | undefined> {
    const { Item } = await doc.send(
      new GetItemCommand({ TableName: table, Key: keyAttributes(key), ConsistentRead: true }),
    );
    return Item && unmarshallItem(Item);
  }

  /** One BatchGetItem per 100 keys (in parallel), UnprocessedKeys retried; items by key id. */
  async function batchGet(
    doc: DynamoDBDocumentClient,
    keys: ItemKey[],
    projection?: { expression: string; names: Record<string, string> },
  ) {
    const unique = [...new Map(keys.map((key) => [itemKeyId(key), key])).values()];
    const found = new Map<string, Item>();
    const chunks: ItemKey[][] = [];
    for (let i = 0; i < unique.length; i += 100) chunks.push(unique.slice(i, i + 100));
    await Promise.all(
      chunks.map(async (chunk) => {
        let pending = chunk.map(keyAttributes);
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt > 5) throw new Error('BatchGetItem left keys unprocessed');
          if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt));
          const result = await doc.send(
            new BatchGetItemCommand({
              RequestItems: {
                [table]: {
                  Keys: pending,
                  ConsistentRead: true,
                  ...(projection
                    ? { ProjectionExpression: projection.expression, ExpressionAttributeNames: projection.names }
                    : {}),
                },
              },
            }),
          );
          for (const item of unmarshallItems(result.Responses?.[table])) {
            found.set(itemKeyId({ PK: String(item.PK), SK: String(item.SK) }), item);
          }
          pending = result.UnprocessedKeys?.[table]?.Keys ?? [];
        }
      }),
    );
    return found;
  }

  return { query, getItem, batchGet };
}

export type RawReads = ReturnType<typeof rawReads>;
