/**
 * The DynamoDB client shared by the whole process. One middleware on it asks every call for
 * its consumed capacity and reports the call to the current request's RequestCost.
 */
import http from 'node:http';
import https from 'node:https';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { addCall, currentCost, inFlight } from './capacity.js';

/** Operations that accept ReturnConsumedCapacity, and whether they read or write. */
const CAPACITY_OPERATIONS: Record<string, 'read' | 'write'> = {
  GetItemCommand: 'read',
  BatchGetItemCommand: 'read',
  QueryCommand: 'read',
  ScanCommand: 'read',
  TransactGetItemsCommand: 'read',
  PutItemCommand: 'write',
  UpdateItemCommand: 'write',
  DeleteItemCommand: 'write',
  BatchWriteItemCommand: 'write',
  TransactWriteItemsCommand: 'write',
};

export interface ClientOptions {
  /** Unset for Amazon DynamoDB (the standard endpoint and credential chain). */
  endpoint?: string | undefined;
  region: string;
  /** Extra configuration, e.g. shorter timeouts for a start-up probe. */
  overrides?: Partial<DynamoDBClientConfig>;
}

export interface Dynamo {
  /** The low-level client, for table administration and tests that add middleware. */
  client: DynamoDBClient;
  /** The document client: plain JavaScript values in and out. */
  doc: DynamoDBDocumentClient;
}

export function createDynamo({ endpoint, region, overrides }: ClientOptions): Dynamo {
  const client = new DynamoDBClient({
    region,
    ...(endpoint
      ? {
          endpoint,
          // DynamoDB Local accepts any credentials; fixed ones keep a developer's AWS profile out of it.
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {}),
    maxAttempts: 3,
    requestHandler: {
      // Keep-alive: a DynamoDB round trip is the unit of latency here, a TCP handshake per call doubles it.
      httpAgent: new http.Agent({ keepAlive: true, maxSockets: 64 }),
      httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 64 }),
      connectionTimeout: 2000,
      requestTimeout: 10_000,
    },
    ...overrides,
  });

  client.middlewareStack.add(
    (next, context) => async (args) => {
      const kind = context.commandName ? CAPACITY_OPERATIONS[context.commandName] : undefined;
      if (!kind) return next(args);
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      const cost = currentCost();
      const operation = (context.commandName ?? '').replace(/Command$/, '');
      const call = (async () => {
        try {
          const result = await next(args);
          if (cost) addCall(cost, operation, (result.output as { ConsumedCapacity?: never }).ConsumedCapacity, kind);
          return result;
        } catch (error) {
          if (cost) addCall(cost, operation, undefined, kind);
          throw error;
        }
      })();
      // Counted in flight, with its accounting: the response waits for it (capacity.ts settled()).
      return cost ? inFlight(cost, call) : call;
    },
    { step: 'initialize', name: 'tablegraphConsumedCapacity', priority: 'high' },
  );

  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
  return { client, doc };
}
