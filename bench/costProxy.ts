/**
 * A recording HTTP proxy in front of DynamoDB Local. The systems under test are pointed at it
 * (DYNAMODB_ENDPOINT) only for the cost pass, never during load runs (it adds a hop). It
 * forwards every request unchanged and, while recording, prices each call the way Amazon
 * DynamoDB would (cost.ts) from the items in the request and response. For writes it reads
 * the items before and after (directly from DynamoDB Local, not counted), so updates are
 * priced by the larger image and index writes by whether the index key moved.
 *
 * Pricing from the wire keeps the model independent of the server's internals: the same code
 * prices the real server, the naive peer and the raw chain.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchGetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { indexWriteUnits, itemSize, pointReadUnits, queryReadUnits, tableWriteUnits } from './cost.js';
import type { BilledCall, WireItem } from './cost.js';

export interface RecordedCall extends BilledCall {
  /** Capacity DynamoDB Local reported for the call (CapacityUnits summed), for comparison. */
  localUnits: number;
  status: number;
}

export interface CostProxy {
  endpoint: string;
  /** Starts a new recording; calls made until `stop()` are returned by it. */
  start(): void;
  stop(): RecordedCall[];
  close(): Promise<void>;
}

interface WireKeyed {
  TableName?: string;
  Key?: WireItem;
  Item?: WireItem;
}

type TransactAction = { Put?: WireKeyed; Update?: WireKeyed; Delete?: WireKeyed; ConditionCheck?: WireKeyed };

const keyOf = (item: WireItem): WireItem => ({ PK: item.PK as WireItem[string], SK: item.SK as WireItem[string] });
const keyId = (key: WireItem): string => JSON.stringify([key.PK, key.SK]);

function consumedUnits(consumed: unknown): number {
  const list = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as { CapacityUnits?: number }[];
  return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}

export async function startCostProxy(target: string): Promise<CostProxy> {
  const targetUrl = new URL(target);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const side = new DynamoDBClient({
    endpoint: target,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let recording: RecordedCall[] | undefined;

  /** Current images of `keys` in `table`, read directly (not through the proxy). */
  async function images(table: string, keys: WireItem[]): Promise<Map<string, WireItem>> {
    const found = new Map<string, WireItem>();
    const unique = [...new Map(keys.map((key) => [keyId(key), key])).values()];
    for (let i = 0; i < unique.length; i += 100) {
      let pending = unique.slice(i, i + 100) as unknown as Record<string, AttributeValue>[];
      while (pending.length > 0) {
        const result = await side.send(
          new BatchGetItemCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const raw of result.Responses?.[table] ?? []) {
          // The SDK's AttributeValue objects have the wire shape ({ S: "…" }).
          const item = raw as unknown as WireItem;
          found.set(keyId(item), item);
        }
        pending = result.UnprocessedKeys?.[table]?.Keys ?? [];
      }
    }
    return found;
  }

  interface PlannedWrite {
    table: string;
    key: WireItem;
  }

  /** The items a write request will touch, so their images can be read before and after. */
  function plannedWrites(operation: string, body: Record<string, unknown>): PlannedWrite[] {
    const writes: PlannedWrite[] = [];
    const add = (keyed: WireKeyed | undefined) => {
      if (!keyed?.TableName) return;
      const key = keyed.Key ?? (keyed.Item ? keyOf(keyed.Item) : undefined);
      if (key) writes.push({ table: keyed.TableName, key });
    };
    if (operation === 'TransactWriteItems') {
      for (const action of (body.TransactItems ?? []) as TransactAction[]) {
        add(action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck);
      }
    } else if (operation === 'PutItem' || operation === 'UpdateItem' || operation === 'DeleteItem') {
      add(body);
    } else if (operation === 'BatchWriteItem') {
      const requestItems = (body.RequestItems ?? {}) as Record<
        string,
        { PutRequest?: { Item: WireItem }; DeleteRequest?: { Key: WireItem } }[]
      >;
      for (const [table, requests] of Object.entries(requestItems)) {
        for (const request of requests) {
          const key = request.PutRequest ? keyOf(request.PutRequest.Item) : request.DeleteRequest?.Key;
          if (key) writes.push({ table, key });
        }
      }
    }
    return writes;
  }

  async function imagesOf(writes: PlannedWrite[]): Promise<Map<string, WireItem>> {
    const all = new Map<string, WireItem>();
    const byTable = new Map<string, WireItem[]>();
    for (const write of writes) byTable.set(write.table, [...(byTable.get(write.table) ?? []), write.key]);
    for (const [table, keys] of byTable) for (const [id, item] of await images(table, keys)) all.set(id, item);
    return all;
  }

  /**
   * Reads are billed on whole items even when a ProjectionExpression returns only some
   * attributes: for such a read, the returned items' whole sizes (read directly).
   */
  async function wholeSizes(operation: string, request: Record<string, unknown>, response: Record<string, unknown>) {
    const sizes = new Map<string, number>();
    const groups: [string, WireItem[]][] = [];
    if (operation === 'BatchGetItem') {
      const requested = (request.RequestItems ?? {}) as Record<string, { ProjectionExpression?: string }>;
      const responses = (response.Responses ?? {}) as Record<string, WireItem[]>;
      for (const [table, spec] of Object.entries(requested)) {
        if (spec.ProjectionExpression) groups.push([table, responses[table] ?? []]);
      }
    } else if ((operation === 'GetItem' || operation === 'Query') && request.ProjectionExpression) {
      const items =
        operation === 'GetItem' ? [response.Item as WireItem | undefined] : (response.Items as WireItem[] | undefined);
      groups.push([String(request.TableName), (items ?? []).filter((item): item is WireItem => item !== undefined)]);
    }
    for (const [table, items] of groups) {
      const keyed = items.filter((item) => item.PK && item.SK);
      for (const [id, item] of await images(table, keyed.map(keyOf))) sizes.set(id, itemSize(item));
    }
    return sizes;
  }

  function price(
    operation: string,
    request: Record<string, unknown>,
    response: Record<string, unknown>,
    before: Map<string, WireItem>,
    after: Map<string, WireItem>,
    writes: PlannedWrite[],
    whole: Map<string, number>,
  ): Omit<RecordedCall, 'localUnits' | 'status' | 'wireBytes'> {
    const sizeOf = (item: WireItem) => (item.PK && item.SK ? whole.get(keyId(item)) : undefined) ?? itemSize(item);
    const call = {
      operation,
      readUnits: 0,
      eventualReadUnits: 0,
      writeUnits: 0,
      indexWriteUnits: 0,
      itemBytes: [] as number[],
    };
    switch (operation) {
      case 'GetItem': {
        const item = response.Item as WireItem | undefined;
        const size = item ? sizeOf(item) : undefined;
        call.readUnits = pointReadUnits(size, request.ConsistentRead === true);
        call.eventualReadUnits = pointReadUnits(size, false);
        if (size !== undefined) call.itemBytes.push(size);
        break;
      }
      case 'BatchGetItem': {
        const requested = (request.RequestItems ?? {}) as Record<
          string,
          { Keys: WireItem[]; ConsistentRead?: boolean }
        >;
        const responses = (response.Responses ?? {}) as Record<string, WireItem[]>;
        const unprocessed = (response.UnprocessedKeys ?? {}) as Record<string, { Keys: WireItem[] }>;
        for (const [table, { Keys, ConsistentRead }] of Object.entries(requested)) {
          const found = new Map((responses[table] ?? []).map((item) => [keyId(item), item]));
          const skipped = new Set((unprocessed[table]?.Keys ?? []).map(keyId));
          for (const key of Keys) {
            if (skipped.has(keyId(key))) continue;
            const item = found.get(keyId(key));
            const size = item ? sizeOf(item) : undefined;
            call.readUnits += pointReadUnits(size, ConsistentRead === true);
            call.eventualReadUnits += pointReadUnits(size, false);
            if (size !== undefined) call.itemBytes.push(size);
          }
        }
        break;
      }
      case 'Query':
      case 'Scan': {
        const sizes = ((response.Items ?? []) as WireItem[]).map(sizeOf);
        // GSI reads are always eventually consistent; table and LSI reads as asked.
        const onGsi = typeof request.IndexName === 'string' && request.IndexName.startsWith('GSI');
        call.readUnits = queryReadUnits(sizes, request.ConsistentRead === true && !onGsi);
        call.eventualReadUnits = queryReadUnits(sizes, false);
        call.itemBytes.push(...sizes);
        break;
      }
      case 'TransactWriteItems':
      case 'PutItem':
      case 'UpdateItem':
      case 'DeleteItem':
      case 'BatchWriteItem': {
        const transactional = operation === 'TransactWriteItems';
        for (const write of writes) {
          const old = before.get(keyId(write.key));
          const now = after.get(keyId(write.key));
          const oldSize = old ? itemSize(old) : undefined;
          const newSize = now ? itemSize(now) : undefined;
          call.writeUnits += tableWriteUnits(oldSize, newSize, transactional);
          call.indexWriteUnits += indexWriteUnits(old, now);
          call.itemBytes.push(Math.max(oldSize ?? 0, newSize ?? 0));
        }
        break;
      }
      default:
        break;
    }
    return call;
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const target = String(req.headers['x-amz-target'] ?? '');
        const operation = target.split('.').pop() ?? '';
        // Only DynamoDB's own API is priced (not DynamoDB Streams, should a consumer poll through here).
        const recordThis = target.startsWith('DynamoDB_20120810.') ? recording : undefined;
        let request: Record<string, unknown> = {};
        let writes: PlannedWrite[] = [];
        let before = new Map<string, WireItem>();
        if (recordThis) {
          try {
            request = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
          } catch {
            request = {};
          }
          writes = plannedWrites(operation, request);
          if (writes.length > 0) before = await imagesOf(writes);
        }
        const upstream = http.request(
          {
            host: targetUrl.hostname,
            port: targetUrl.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
            agent,
          },
          (upstreamRes) => {
            const out: Buffer[] = [];
            upstreamRes.on('data', (chunk: Buffer) => out.push(chunk));
            upstreamRes.on('end', () => {
              void (async () => {
                const responseBody = Buffer.concat(out);
                const status = upstreamRes.statusCode ?? 0;
                if (recordThis) {
                  let response: Record<string, unknown> = {};
                  try {
                    response = JSON.parse(responseBody.toString('utf8')) as Record<string, unknown>;
                  } catch {
                    response = {};
                  }
                  const after = status === 200 && writes.length > 0 ? await imagesOf(writes) : before;
                  const whole =
                    status === 200 ? await wholeSizes(operation, request, response) : new Map<string, number>();
                  const priced =
                    status === 200
                      ? price(operation, request, response, before, after, writes, whole)
                      : {
                          operation,
                          readUnits: 0,
                          eventualReadUnits: 0,
                          writeUnits: 0,
                          indexWriteUnits: 0,
                          itemBytes: [],
                        };
                  recordThis.push({
                    ...priced,
                    wireBytes: responseBody.length,
                    localUnits: consumedUnits(response.ConsumedCapacity),
                    status,
                  });
                }
                res.writeHead(status, upstreamRes.headers);
                res.end(responseBody);
              })();
            });
          },
        );
        upstream.on('error', (error) => {
          res.writeHead(502);
          res.end(String(error));
        });
        upstream.end(body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    start() {
      recording = [];
    },
    stop() {
      const calls = recording ?? [];
      recording = undefined;
      return calls;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      side.destroy();
    },
  };
}
