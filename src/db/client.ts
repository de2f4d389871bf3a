/**
 * The DynamoDB client shared by the whole process. One middleware on it asks every call for
 * its consumed capacity; `costed` gives an execution a view of the document client that adds
 * each of its calls to the execution's RequestCost.
 */
import http from 'node:http';
import https from 'node:https';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand as QueryItemsCommand,
  ScanCommand as ScanItemsCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { tracedSend } from '../telemetry/dynamoSpans.js';
import { bindClient, traceOf } from '../telemetry/requestTrace.js';
import { countCall, readGateOf } from './capacity.js';
import { leanSend } from './leanSend.js';
import type { RequestCost } from './capacity.js';
import { recordItems, recordRead } from './dependencyRecord.js';
import type { DependencyRecord } from './dependencyRecord.js';

type CommandClass = abstract new (...args: never[]) => unknown;

/** The commands `costed` counts (document client and low-level ones): DynamoDB's operation name, and read or write. */
const COUNTED_COMMANDS = new Map<CommandClass, [operation: string, kind: 'read' | 'write']>([
  [GetCommand, ['GetItem', 'read']],
  [GetItemCommand, ['GetItem', 'read']],
  [BatchGetCommand, ['BatchGetItem', 'read']],
  [BatchGetItemCommand, ['BatchGetItem', 'read']],
  [QueryCommand, ['Query', 'read']],
  [QueryItemsCommand, ['Query', 'read']],
  [ScanCommand, ['Scan', 'read']],
  [ScanItemsCommand, ['Scan', 'read']],
  [TransactGetCommand, ['TransactGetItems', 'read']],
  [TransactGetItemsCommand, ['TransactGetItems', 'read']],
  [PutCommand, ['PutItem', 'write']],
  [PutItemCommand, ['PutItem', 'write']],
  [UpdateCommand, ['UpdateItem', 'write']],
  [UpdateItemCommand, ['UpdateItem', 'write']],
  [DeleteCommand, ['DeleteItem', 'write']],
  [DeleteItemCommand, ['DeleteItem', 'write']],
  [BatchWriteCommand, ['BatchWriteItem', 'write']],
  [BatchWriteItemCommand, ['BatchWriteItem', 'write']],
  [TransactWriteCommand, ['TransactWriteItems', 'write']],
  [TransactWriteItemsCommand, ['TransactWriteItems', 'write']],
]);

/** The low-level commands among them: no middleware of their own (the document client's add theirs per instance). */
const LOW_LEVEL_COMMANDS = new Set<CommandClass>([
  GetItemCommand,
  BatchGetItemCommand,
  QueryItemsCommand,
  ScanItemsCommand,
  TransactGetItemsCommand,
  PutItemCommand,
  UpdateItemCommand,
  DeleteItemCommand,
  BatchWriteItemCommand,
  TransactWriteItemsCommand,
]);

/** The low-level command names of the same operations: those that accept ReturnConsumedCapacity. */
const CAPACITY_COMMANDS = new Set([...COUNTED_COMMANDS.values()].map(([operation]) => `${operation}Command`));

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
  /**
   * The document client: plain JavaScript values in and out. It sends low-level commands as they
   * are: the hot reads send those and convert their items themselves (attributeValues.ts).
   */
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
      if (context.commandName && CAPACITY_COMMANDS.has(context.commandName)) {
        const input = args.input as { ReturnConsumedCapacity?: string };
        input.ReturnConsumedCapacity ??= 'TOTAL';
      }
      return next(args);
    },
    { step: 'initialize', name: 'tablegraphConsumedCapacity', priority: 'high' },
  );

  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
  return { client, doc };
}

/** What a costed client (below) carries: its shared client (on its prototype), its cost record and dependency record. */
const SHARED = Symbol('tablegraph.shared');
const COST = Symbol('tablegraph.cost');
const READS = Symbol('tablegraph.reads');

interface CostedClient {
  [SHARED]: DynamoDBDocumentClient;
  [COST]: RequestCost;
  [READS]: DependencyRecord | undefined;
}

/** A costed client's `send`: counts the call into the client's cost record (and its reads), then sends it on the shared client. */
function costedSend(this: CostedClient, command: object, options?: object): Promise<unknown> {
  const { [SHARED]: shared, [COST]: cost, [READS]: reads } = this;
  const counted = COUNTED_COMMANDS.get(command.constructor as CommandClass);
  // A gated read (a subscription opening past its budget) is refused before anything is sent.
  if (counted?.[1] === 'read') {
    try {
      readGateOf(cost)?.();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
  if (reads && counted?.[1] === 'read') recordRead(reads, counted[0], command);
  const direct = (lean: boolean) => {
    const sent = ((lean && leanSend(shared, command)) || shared.send(command as never, options as never)) as Promise<{
      ConsumedCapacity?: never;
    }>;
    return reads && counted?.[0] === 'Query' ? sent.then((output) => recordItems(reads, command, output)) : sent;
  };
  // A low-level command with nothing of its own goes through its class's middleware, resolved once (leanSend.ts).
  const lean = options === undefined && LOW_LEVEL_COMMANDS.has(command.constructor as CommandClass);
  if (!counted) return direct(false);
  const [operation, kind] = counted;
  // A traced execution's calls get a span each (telemetry/dynamoSpans.ts), with middleware of
  // their own; traceOf is one check while tracing is off.
  const trace = traceOf(cost);
  const call = trace ? tracedSend(trace, operation, kind, command, () => direct(false)) : direct(lean);
  return countCall(cost, operation, kind, call);
}

/** Per shared client, the prototype of its costed clients: the shared client with `send` counted. */
const costedPrototypes = new WeakMap<DynamoDBDocumentClient, object>();

/**
 * The shared document client, as one that adds every call it sends to `cost`: one call
 * per command (the SDK's own retries not included), with the capacity DynamoDB reports, and in
 * flight until it settles (the response waits for it: capacity.ts `settled`). An execution
 * context makes every read and write through one of these (graphql/context.ts); its calls are spans of the execution's trace when
 * it is traced. With `reads`,
 * every read also names what it asked for there (dependencyRecord.ts): the response cache's
 * record of what the answer depends on. Everything but `send` is the shared client's (its
 * configuration, middleware and sockets); a request's client is one object whose prototype,
 * made once per shared client, holds `send`.
 */
export function costed(
  shared: DynamoDBDocumentClient,
  cost: RequestCost,
  reads?: DependencyRecord,
): DynamoDBDocumentClient {
  let prototype = costedPrototypes.get(shared);
  if (!prototype) {
    prototype = Object.create(shared, { send: { value: costedSend }, [SHARED]: { value: shared } }) as object;
    costedPrototypes.set(shared, prototype);
  }
  const client = Object.create(prototype) as CostedClient & DynamoDBDocumentClient;
  client[COST] = cost;
  client[READS] = reads;
  bindClient(client, cost);
  return client;
}
