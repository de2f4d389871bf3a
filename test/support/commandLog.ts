/**
 * Records the DynamoDB operations the server sends, by name ("Query", "BatchGetItem"...), so a
 * test can tell which requests a GraphQL request cost, not only how many
 * (`extensions.cost.dynamodb.requests` only counts them), and the capacity units DynamoDB
 * reported for them.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface CommandLog {
  /** Operations sent since the last `clear()`, in the order they were sent. */
  readonly operations: string[];
  /** Capacity units reported for them (DynamoDB Local reports reads by item size, as DynamoDB does). */
  readonly capacityUnits: number;
  clear(): void;
  /** Pass as `configureClient` to `startTestServer`. */
  attach(client: DynamoDBClient): void;
}

type Consumed = { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;

const unitsOf = (consumed: Consumed): number =>
  (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
    (sum, { CapacityUnits = 0 }) => sum + CapacityUnits,
    0,
  );

export function commandLog(): CommandLog {
  const operations: string[] = [];
  let capacityUnits = 0;
  return {
    operations,
    get capacityUnits() {
      return capacityUnits;
    },
    clear() {
      operations.length = 0;
      capacityUnits = 0;
    },
    attach(client) {
      client.middlewareStack.add(
        (next, context) => async (args) => {
          operations.push((context.commandName ?? 'unknown').replace(/Command$/, ''));
          const result = await next(args);
          capacityUnits += unitsOf((result.output as { ConsumedCapacity?: Consumed }).ConsumedCapacity);
          return result;
        },
        { step: 'initialize', name: 'testCommandLog' },
      );
    },
  };
}
