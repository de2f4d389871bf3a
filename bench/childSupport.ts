/**
 * What the two comparison servers (rawChain.ts, naivePeer.ts) share: their environment, a
 * DynamoDB client configured like the real server's (keep-alive, 64 sockets), and per-request
 * metering of DynamoDB calls. The raw chain meters the way the real server does (a document
 * client bound to the request's record, src/db/client.ts `costed`), so both pay the same bookkeeping; the
 * naive peer, whose resolvers reach one shared client, finds its record through
 * AsyncLocalStorage.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { newRequestCost } from '../src/db/capacity.js';
import type { RequestCost } from '../src/db/capacity.js';

/** The server's own cost record. */
export type Meter = RequestCost;

export const newMeter = newRequestCost;

const storage = new AsyncLocalStorage<Meter>();
export const runMetered = <T>(meter: Meter, fn: () => T): T => storage.run(meter, fn);
export const currentMeter = (): Meter | undefined => storage.getStore();

export const costExtension = (meter: Meter) => ({
  cost: {
    dynamodb: {
      requests: meter.requests,
      readCapacityUnits: Math.round(meter.readCapacityUnits * 100) / 100,
      writeCapacityUnits: Math.round(meter.writeCapacityUnits * 100) / 100,
    },
  },
});

const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

export interface ChildEnv {
  endpoint: string;
  tableName: string;
  port: number;
  keepAlive: boolean;
}

export function childEnv(): ChildEnv {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  const tableName = process.env.TABLE_NAME;
  if (!endpoint || !tableName) throw new Error('DYNAMODB_ENDPOINT and TABLE_NAME are required');
  return {
    endpoint,
    tableName,
    port: Number(process.env.PORT ?? 0),
    keepAlive: process.env.BENCH_KEEPALIVE !== 'false',
  };
}

/** A document client like src/db/client.ts's (keep-alive unless BENCH_KEEPALIVE=false), metered per request. */
export function createMeteredDoc({ endpoint, keepAlive }: ChildEnv): {
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
} {
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 3,
    requestHandler: {
      httpAgent: new http.Agent({ keepAlive, maxSockets: 64 }),
      connectionTimeout: 2000,
      requestTimeout: 10_000,
    },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      const meter = currentMeter();
      const result = await next(args);
      if (meter) {
        meter.requests += 1;
        const consumed = (
          result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }
        ).ConsumedCapacity;
        const units = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
          (sum, entry) => sum + (entry.CapacityUnits ?? 0),
          0,
        );
        if (WRITES.has(context.commandName ?? '')) meter.writeCapacityUnits += units;
        else meter.readCapacityUnits += units;
      }
      return result;
    },
    { step: 'initialize', name: 'benchMeter', priority: 'high' },
  );
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return { client, doc };
}

/** Prints the line the benchmark waits for. */
export function announceReady(server: http.Server, name: string): void {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ level: 30, msg: `${name} ready at http://127.0.0.1:${port}/graphql`, port }));
}

/** Stops on SIGTERM/SIGINT: closes the HTTP server and the DynamoDB client. */
export function stopOnSignals(server: http.Server, client: DynamoDBClient): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      server.closeAllConnections();
      server.close(() => {
        client.destroy();
        process.exit(0);
      });
    });
  }
}
