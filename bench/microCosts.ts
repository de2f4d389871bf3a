/**
 * In-process costs of single pieces of a request, timed in the benchmark process on the
 * server's own code (and graphql-js's): enough to say which per-field, per-item or per-request
 * step is worth removing, next to the profile that says how often a request pays it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { pino } from 'pino';
import { buildSchema, isObjectType, Kind, parse } from 'graphql';
import type { FieldNode, OperationDefinitionNode } from 'graphql';
import { getArgumentValues } from 'graphql/execution/values.js';
import { createVerifier, signToken } from '../src/auth/tokens.js';
import { CursorCodec } from '../src/db/cursor.js';
import { createMetrics } from '../src/pipeline/report/metrics.js';
import { projectRoot } from '../src/projectRoot.js';
import { itemToOrder, orderToUserItem } from '../src/table/codecs.js';
import type { Dataset } from './dataset.js';
import { JWT_SECRET } from './systems.js';

export interface MicroCost {
  piece: string;
  /** How often one request of the named operation pays it. */
  perRequest: string;
  microseconds: number;
}

/** Times `fn` in this process (after a warm-up), in microseconds per call. */
async function perCall(fn: () => unknown, calls: number): Promise<number> {
  for (let i = 0; i < Math.min(calls, 200); i++) await fn();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await fn();
  return ((performance.now() - started) * 1000) / calls;
}

export async function microCosts(data: Dataset, userOrdersBody: string | undefined): Promise<MicroCost[]> {
  const rows: MicroCost[] = [];
  const auth = { secret: JWT_SECRET, issuer: 'tablegraph-local', audience: 'tablegraph' };
  const verify = createVerifier(auth);
  const token = await signToken({ userId: 'bench-admin', role: 'admin' }, auth);
  rows.push({
    piece: 'verify the JWT (jose, HS256)',
    perRequest: 'once per request',
    microseconds: await perCall(() => verify(token), 2000),
  });
  const codec = new CursorCodec('bench-cursor-secret');
  const order = data.orders[0];
  if (order) {
    const item = orderToUserItem(order);
    const key = { PK: String(item.PK), SK: String(item.SK) };
    const cursor = codec.encode('User.orders:x', key);
    rows.push({
      piece: 'sign a cursor (HMAC-SHA256)',
      perRequest: 'per edge (21 in userOrders)',
      microseconds: await perCall(() => codec.encode('User.orders:x', key), 20_000),
    });
    rows.push({
      piece: 'check a cursor',
      perRequest: 'per `after`/`before`',
      microseconds: await perCall(() => codec.decode('User.orders:x', cursor, ['PK', 'SK'], 'after'), 20_000),
    });
    const wire = marshall(item, { removeUndefinedValues: true });
    rows.push({
      piece: 'unmarshall one order item',
      perRequest: 'per item read (~60 in userOrders)',
      microseconds: await perCall(() => unmarshall(wire), 20_000),
    });
    rows.push({
      piece: 'decode one order item (codec)',
      perRequest: 'per item read',
      microseconds: await perCall(() => itemToOrder(item), 20_000),
    });
  }
  rows.push(...graphqlPieces());
  const metrics = createMetrics({ process: false });
  rows.push({
    piece: 'record a request’s metrics (prom-client: its duration, 3 DynamoDB calls)',
    perRequest: 'once per request',
    microseconds: await perCall(() => {
      metrics.requestDuration.observe({ operation: 'NestedPage' }, 0.02);
      for (let i = 0; i < 3; i++) metrics.dynamoRequests.inc({ operation: 'Query', outcome: 'ok' });
    }, 20_000),
  });
  // The server's one log line per request (at the default level, info), as JSON to a file.
  const log = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: true }));
  rows.push({
    piece: 'write the request’s log line (pino, JSON, synchronous)',
    perRequest: 'once per request at LOG_LEVEL=info (the benchmark’s servers run at warn)',
    microseconds: await perCall(
      () =>
        log.info(
          {
            transport: 'http',
            operationName: 'NestedPage',
            durationMs: 12.34,
            dynamodb: {
              requests: 3,
              readCapacityUnits: 12,
              writeCapacityUnits: 0,
              byOperation: { Query: 2, BatchGetItem: 1 },
            },
            errors: 0,
          },
          'graphql request',
        ),
      20_000,
    ),
  });
  if (userOrdersBody) {
    const value: unknown = JSON.parse(userOrdersBody);
    rows.push({
      piece: 'count the fields of the userOrders response',
      perRequest: `${fieldsIn(value)} fields: each one a field graphql-js resolved`,
      microseconds: 0,
    });
    rows.push({
      piece: `JSON.stringify the userOrders response (${(userOrdersBody.length / 1024).toFixed(1)} KB)`,
      perRequest: 'once per request',
      microseconds: await perCall(() => JSON.stringify(value), 2000),
    });
  }
  return rows;
}

/** Object fields in a JSON value, recursively: the fields an executor completed to build it. */
function fieldsIn(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + fieldsIn(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return Object.values(value).reduce((sum: number, item) => sum + 1 + fieldsIn(item), 0);
}

/** What graphql-js does for every field it resolves, arguments or not: coerce the arguments. */
function graphqlPieces(): MicroCost[] {
  const schema = buildSchema(readFileSync(path.join(projectRoot(), 'schema.graphql'), 'utf8'));
  const user = schema.getType('User');
  if (!isObjectType(user)) return [];
  const fields = user.getFields();
  const operation = parse('{ orders(first: 20) { totalCount } name }').definitions[0] as OperationDefinitionNode;
  const [ordersNode, nameNode] = operation.selectionSet.selections.filter(
    (node): node is FieldNode => node.kind === Kind.FIELD,
  );
  const ordersField = fields.orders;
  const nameField = fields.name;
  if (!ordersNode || !nameNode || !ordersField || !nameField) return [];
  const time = (fn: () => unknown) => {
    for (let i = 0; i < 2000; i++) fn();
    const started = performance.now();
    for (let i = 0; i < 200_000; i++) fn();
    return ((performance.now() - started) * 1000) / 200_000;
  };
  return [
    {
      piece: 'getArgumentValues, a field without arguments (graphql-js)',
      perRequest: 'per field resolved',
      microseconds: time(() => getArgumentValues(nameField, nameNode, {})),
    },
    {
      piece: 'getArgumentValues, `orders(first: 20)` (graphql-js)',
      perRequest: 'per field with arguments',
      microseconds: time(() => getArgumentValues(ordersField, ordersNode, {})),
    },
  ];
}
