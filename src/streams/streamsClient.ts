/**
 * The DynamoDB Streams client, configured like the table's client (src/db/client.ts): the same
 * endpoint and fixed local credentials for DynamoDB Local, the standard chain for AWS.
 */
import http from 'node:http';
import https from 'node:https';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamsClientConfig } from '@aws-sdk/client-dynamodb-streams';

export interface StreamsClientOptions {
  /** Unset for Amazon DynamoDB Streams. */
  endpoint?: string | undefined;
  region: string;
  overrides?: Partial<DynamoDBStreamsClientConfig>;
}

export function createStreamsClient({ endpoint, region, overrides }: StreamsClientOptions): DynamoDBStreamsClient {
  return new DynamoDBStreamsClient({
    region,
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    // The consumer retries on its own schedule (with backoff per shard); SDK retries would only stall a poll.
    maxAttempts: 2,
    requestHandler: {
      // The consumer polls several times a second: a TCP handshake per poll would be most of its cost.
      httpAgent: new http.Agent({ keepAlive: true, maxSockets: 16 }),
      httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 16 }),
      connectionTimeout: 2000,
      requestTimeout: 10_000,
    },
    ...overrides,
  });
}
