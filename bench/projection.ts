/**
 * `npm run bench:projection`: what a ProjectionExpression of only the attributes an operation
 * shows saves on the reads of the benchmark's shapes, measured on the reads alone (the low-level
 * command as the server's reads send it, and the reads' own conversion, attributeValues.ts):
 * bytes allocated (heap growth plus what each garbage collection freed, v8.GCProfiler), CPU and
 * the items' JSON bytes per request, full items against projected ones, the two taking turns
 * round by round on one DynamoDB Local (in memory). The projections are what the operations of
 * bench/operations.ts show (the key and `entityType` kept): userOrders' user collection and its
 * products, nodes50's mixed BatchGetItem.
 *
 *   npm run bench:projection -- --rounds 5
 */
import { BatchGetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parseCommandLine } from '../src/cli.js';
import { keyAttributes, toAttributeMap, unmarshallItems } from '../src/db/attributeValues.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import { baselineNewTable } from '../src/migrations/runner.js';
import { itemToOrder } from '../src/table/codecs.js';
import { ORDER_SK_PREFIX, orderKey, PROFILE_SK, productKey, userKey, userPK } from '../src/table/keys.js';
import type { ItemKey } from '../src/table/keys.js';
import { loadBenchConfig } from './config.js';
import { buildDataset, seedDataset } from './dataset.js';
import { allocatedBytes } from './heapProfile.js';

const { values } = parseCommandLine({
  name: 'bench:projection',
  run: 'npm run bench:projection --',
  usage: `[--rounds 5]

Full items against projected ones on the reads of userOrders and nodes50: KB allocated, CPU and
item bytes per request.

  --rounds <n>   rounds, full and projected taking turns (default 5)`,
  options: { rounds: { type: 'string', default: '5' } },
});
const ROUNDS = Math.max(1, Number(values.rounds) || 5);

interface Projection {
  expression: string;
  names: Record<string, string>;
}

/** userOrders' user and orders: `id userId name email`, `totalCount`, ORDER_FIELDS and the lines. */
const USER_ORDERS: Projection = {
  expression: 'PK, SK, entityType, userId, email, #n, orderCount, orderId, #s, placedAt, #i, #t',
  names: { '#n': 'name', '#s': 'status', '#i': 'items', '#t': 'total' },
};
/** PRODUCT_FIELDS. */
const PRODUCT: Projection = {
  expression: 'PK, SK, entityType, productId, #n, price, stock',
  names: { '#n': 'name' },
};
/** nodes50's fragments on User, Order and Product: one projection for the one BatchGetItem. */
const NODES: Projection = {
  expression: 'PK, SK, entityType, userId, email, #n, orderId, #s, #t, productId, price, stock',
  names: { '#n': 'name', '#s': 'status', '#t': 'total' },
};

const projected = (projection: Projection | undefined) =>
  projection ? { ProjectionExpression: projection.expression, ExpressionAttributeNames: projection.names } : {};

function reads(client: DynamoDBClient, tableName: string) {
  let itemBytes = 0;
  return {
    taken: () => {
      const bytes = itemBytes;
      itemBytes = 0;
      return bytes;
    },
    /** The user collection's first page, as userOrders reads it (userCollection.ts). */
    async collection(userId: string, projection?: Projection) {
      const out = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'PK = :pk AND SK BETWEEN :orders AND :profile',
          ExpressionAttributeValues: toAttributeMap({
            ':pk': userPK(userId),
            ':orders': ORDER_SK_PREFIX,
            ':profile': PROFILE_SK,
          }),
          ScanIndexForward: false,
          ConsistentRead: true,
          Limit: 22,
          ...projected(projection),
        }),
      );
      itemBytes += JSON.stringify(out.Items ?? []).length;
      return unmarshallItems(out.Items);
    },
    /** One BatchGetItem of `keys` (deduplicated), as batchGet.ts sends it. */
    async batch(keys: readonly ItemKey[], projection?: Projection) {
      const unique = [...new Map(keys.map((key) => [`${key.PK}\n${key.SK}`, key])).values()].slice(0, 100);
      const out = await client.send(
        new BatchGetItemCommand({
          RequestItems: {
            [tableName]: { Keys: unique.map(keyAttributes), ConsistentRead: true, ...projected(projection) },
          },
        }),
      );
      itemBytes += JSON.stringify(out.Responses?.[tableName] ?? []).length;
      return unmarshallItems(out.Responses?.[tableName]);
    },
  };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const config = { ...loadBenchConfig([]), users: 40, productsPerCategory: 20, scaleOrders: 0 };
const local = await startLocalDynamo();
try {
  const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
  const tableName = `Projection-${Date.now().toString(36)}`;
  await ensureTable(dynamo.client, tableName, local.endpoint);
  await baselineNewTable(dynamo.doc, tableName);
  const data = buildDataset(config);
  await seedDataset(dynamo.doc, tableName, data, config, () => undefined);
  const read = reads(dynamo.client, tableName);
  const users = data.users.slice(0, 30).map((user) => user.userId);
  const productKeys = new Map<string, ItemKey[]>();
  for (const userId of users) {
    const orders = (await read.collection(userId)).filter((item) => item.SK !== PROFILE_SK).map(itemToOrder);
    productKeys.set(
      userId,
      orders.flatMap((order) => order.items.map((line) => productKey(line.productId))),
    );
  }
  const nodeKeys = [
    ...data.users.slice(0, 10).map((user) => userKey(user.userId)),
    ...data.orders.slice(0, 20).map((order) => orderKey(order.orderId)),
    ...data.products.slice(0, 20).map((product) => productKey(product.productId)),
  ];
  const shapes: [string, (projection: boolean) => Promise<void>][] = [
    [
      'userOrders: the user collection (Query, 22 items)',
      async (on) => {
        for (const userId of users) await read.collection(userId, on ? USER_ORDERS : undefined);
      },
    ],
    [
      "userOrders: the orders' products (BatchGetItem)",
      async (on) => {
        for (const userId of users) await read.batch(productKeys.get(userId) ?? [], on ? PRODUCT : undefined);
      },
    ],
    [
      'nodes50: 50 mixed nodes (BatchGetItem)',
      async (on) => {
        for (let i = 0; i < users.length; i += 1) await read.batch(nodeKeys, on ? NODES : undefined);
      },
    ],
  ];
  console.log(
    '| read | KB allocated: full → projected | CPU µs: full → projected | item JSON bytes: full → projected |',
  );
  console.log('| --- | --: | --: | --: |');
  for (const [name, run] of shapes) {
    for (let warm = 0; warm < 5; warm += 1) {
      await run(false);
      await run(true);
    }
    const cells = {
      full: { kb: [] as number[], cpu: [] as number[], bytes: 0 },
      projected: { kb: [] as number[], cpu: [] as number[], bytes: 0 },
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const on of [false, true]) {
        const cell = on ? cells.projected : cells.full;
        read.taken();
        const start = process.cpuUsage();
        const bytes = await allocatedBytes(() => run(on));
        const used = process.cpuUsage(start);
        cell.kb.push(bytes / users.length / 1024);
        cell.cpu.push((used.user + used.system) / users.length);
        cell.bytes = read.taken() / users.length;
      }
    }
    const { full, projected: part } = cells;
    console.log(
      `| ${name} | ${median(full.kb).toFixed(1)} → ${median(part.kb).toFixed(1)} | ${median(full.cpu).toFixed(0)} → ${median(part.cpu).toFixed(0)} | ${full.bytes.toFixed(0)} → ${part.bytes.toFixed(0)} |`,
    );
  }
} finally {
  await local.stop();
}
