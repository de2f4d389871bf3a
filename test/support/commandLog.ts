/**
 * Records the DynamoDB operations the server sends, by name ("Query", "BatchGetItem"...), so a
 * test can tell which requests a GraphQL request cost, not only how many
 * (`extensions.cost.dynamodb.requests` only counts them).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface CommandLog {
  /** Operations sent since the last `clear()`, in the order they were sent. */
  readonly operations: string[];
  clear(): void;
  /** Pass as `configureClient` to `startTestServer`. */
  attach(client: DynamoDBClient): void;
}

export function commandLog(): CommandLog {
  const operations: string[] = [];
  return {
    operations,
    clear() {
      operations.length = 0;
    },
    attach(client) {
      client.middlewareStack.add(
        (next, context) => async (args) => {
          operations.push((context.commandName ?? 'unknown').replace(/Command$/, ''));
          return next(args);
        },
        { step: 'initialize', name: 'testCommandLog' },
      );
    },
  };
}
