/**
 * Upgrading a table written by the previous release: the real server migrates it before it
 * serves (and a second start migrates nothing), the shop-wide views and counters then agree
 * with the users' own data, a backfill killed halfway (kill -9 of `npm run migrate`, or a
 * crash injected mid-page) resumes and ends in the very table an uninterrupted run leaves, and
 * a server that may not migrate (aws mode) refuses the new fields until someone does.
 */
import { randomUUID } from 'node:crypto';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import { SchemaGate } from '../src/db/schemaGate.js';
import { MIGRATIONS } from '../src/migrations/registry.js';
import { migrate } from '../src/migrations/runner.js';
import { EntityType } from '../src/table/codecs.js';
import type { Item } from '../src/table/codecs.js';
import { MIGRATIONS_PK } from '../src/table/keys.js';
import type { OrderModel, OrderStatus } from '../src/table/models.js';
import { ChildServers } from './support/childServers.js';
import type { ChildServer } from './support/childServers.js';
import { aProduct, aUser, ordersOf } from './support/factories.js';
import { endpoint, errorCodes, startTestServer, tokenFor } from './support/harness.js';
import { createPreviousReleaseTable, storePreviousRelease } from './support/previousRelease.js';
import { runNode } from './support/serverProcess.js';
import { scanTable } from './support/writes.js';

const MIGRATION_IDS = MIGRATIONS.map((migration) => migration.id);
const STATUSES: readonly OrderStatus[] = ['PLACED', 'SHIPPED', 'DELIVERED', 'CANCELLED'];
/** A shop of the previous release: 4 users, 52 orders in every status, 12 products in 3 categories. */
function previousShop() {
  const products = ['books', 'garden', 'tools'].flatMap((category) =>
    Array.from({ length: 4 }, (_, i) =>
      aProduct({ category, priceCents: 500 + ((i * 7 + category.length) % 5) * 250 }),
    ),
  );
  const users = [aUser(), aUser(), aUser(), aUser()];
  const orders: OrderModel[] = users.flatMap((user, u) =>
    ordersOf(user, [products[u]!, products[u + 4]!], 13, Date.parse('2026-04-01T00:00:00.000Z') + u * 7_000).map(
      (order, i) => ({ ...order, status: STATUSES[(i * (u + 1)) % STATUSES.length]! }),
    ),
  );
  return { users, products, orders };
}

const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
const children = new ChildServers();
const tables: string[] = [];
afterAll(async () => {
  await children.killAll();
  dynamo.client.destroy();
});

async function previousReleaseTable(shop = previousShop()): Promise<string> {
  const tableName = `t-${randomUUID()}`;
  tables.push(tableName);
  await createPreviousReleaseTable(dynamo.client, tableName);
  await storePreviousRelease(dynamo.doc, tableName, shop);
  return tableName;
}

const dataItems = async (tableName: string): Promise<Item[]> =>
  (await scanTable(dynamo.doc, tableName)).filter((item) => item.PK !== MIGRATIONS_PK);

async function gql(server: ChildServer, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await tokenFor('ops', 'admin')}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data;
}

const SHOP = `query($status: OrderStatus, $placedAfter: DateTime, $placedBefore: DateTime) {
  orders(status: $status, placedAfter: $placedAfter, placedBefore: $placedBefore, first: 100) {
    nodes { orderId } pageInfo { hasNextPage } } }`;
const USER = `query($userId: ID!, $status: OrderStatus, $placedAfter: DateTime, $placedBefore: DateTime) {
  user(userId: $userId) { orders(status: $status, placedAfter: $placedAfter, placedBefore: $placedBefore, first: 100) {
    nodes { orderId } totalCount } } }`;

describe('a table of the previous release, upgraded by starting the server', () => {
  const shop = previousShop();
  let tableName: string;
  let server: ChildServer;
  beforeAll(async () => {
    tableName = await previousReleaseTable(shop);
    server = await children.start(endpoint(), tableName);
  });

  it('was migrated before the server said it was ready, GSI2 and the product indexes included', async () => {
    const migrated = server.node.logs.find((line) => line.msg === 'migrated table');
    expect(migrated?.applied).toEqual(MIGRATION_IDS);
    const { Table } = await dynamo.client.send(new DescribeTableCommand({ TableName: tableName }));
    for (const name of ['GSI2', 'GSI3', 'GSI4', 'GSI5']) {
      expect(Table?.GlobalSecondaryIndexes?.find((index) => index.IndexName === name)?.IndexStatus).toBe('ACTIVE');
    }
  });

  it('lists every product shop-wide, by name and by price', async () => {
    const byName = await gql(server, '{ products(first: 100) { nodes { productId } } }');
    expect(byName.products.nodes.map((node: any) => node.productId).sort()).toEqual(
      shop.products.map((p) => p.productId).sort(),
    );
    const byPrice = await gql(
      server,
      '{ products(first: 100, orderBy: { field: PRICE }) { nodes { price { amount } } } }',
    );
    const prices = byPrice.products.nodes.map((node: any) => Number(node.price.amount));
    expect(prices).toHaveLength(shop.products.length);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
  });

  it('lists every order shop-wide', async () => {
    const data = await gql(server, SHOP);
    expect(data.orders.pageInfo.hasNextPage).toBe(false);
    expect(data.orders.nodes.map((node: any) => node.orderId).sort()).toEqual(shop.orders.map((o) => o.orderId).sort());
  });

  const views: [string, Record<string, unknown>][] = [
    ...STATUSES.map((status): [string, Record<string, unknown>] => [status, { status }]),
    ['a window', { placedAfter: '2026-04-01T00:03:00.000Z', placedBefore: '2026-04-01T00:09:00.000Z' }],
    ['a status in a window', { status: 'PLACED', placedAfter: '2026-04-01T00:02:00.000Z' }],
  ];
  it.each(views)('shows %s shop-wide exactly as the users’ connections do', async (_name, filter) => {
    const shopWide = (await gql(server, SHOP, filter)).orders.nodes.map((node: any) => node.orderId);
    const perUser: string[] = [];
    for (const user of shop.users) {
      perUser.push(
        ...(await gql(server, USER, { userId: user.userId, ...filter })).user.orders.nodes.map((n: any) => n.orderId),
      );
    }
    expect(shopWide.length).toBeGreaterThan(0);
    expect([...shopWide].sort()).toEqual(perUser.sort());
  });

  it('counts what a recount finds: orders per user and status, products per category', async () => {
    for (const user of shop.users) {
      for (const status of STATUSES) {
        const { totalCount } = (await gql(server, USER, { userId: user.userId, status })).user.orders;
        expect(totalCount).toBe(shop.orders.filter((o) => o.userId === user.userId && o.status === status).length);
      }
    }
    const { categories } = await gql(server, '{ categories { name productCount } }');
    expect(categories).toEqual([
      { name: 'books', productCount: 4 },
      { name: 'garden', productCount: 4 },
      { name: 'tools', productCount: 4 },
    ]);
  });

  it('migrates nothing on a second start', async () => {
    server.node.child.kill('SIGTERM');
    await server.node.exited;
    const before = await scanTable(dynamo.doc, tableName);
    server = await children.start(endpoint(), tableName);
    expect(server.node.logs.filter((line) => line.migration !== undefined || line.msg === 'migrated table')).toEqual(
      [],
    );
    expect(await scanTable(dynamo.doc, tableName)).toEqual(before);
  });
});

describe('a backfill stopped halfway', () => {
  const shop = previousShop();
  let uninterrupted: Item[];
  beforeAll(async () => {
    const reference = await previousReleaseTable(shop);
    const result = await migrate({ client: dynamo.client, doc: dynamo.doc, tableName: reference });
    expect(result.applied).toEqual(MIGRATION_IDS);
    uninterrupted = await dataItems(reference);
  });

  it('by kill -9 of npm run migrate resumes from its checkpoint and ends in the same table', async () => {
    const tableName = await previousReleaseTable(shop);
    const env = { DYNAMODB_ENDPOINT: endpoint(), TABLE_NAME: tableName };
    // Paced to 25 WCU/s, the ~120 writes take seconds: time enough to kill it after its first checkpoint.
    const slow = spawnMigrate(env, ['--wcu', '25']);
    try {
      await waitForOutput(slow, /items: \d+ scanned/);
    } finally {
      slow.child.kill('SIGKILL');
    }
    expect((await slow.exited).signal).toBe('SIGKILL');

    const status = spawnMigrate(env, ['--status']);
    expect((await status.exited).code).toBe(0);
    expect(status.stdout()).toMatch(/0001-shop-orders-index\s+running .*interrupted at \w+ \(\d+ items scanned\)/);

    const lines: string[] = [];
    const result = await migrate({
      client: dynamo.client,
      doc: dynamo.doc,
      tableName,
      report: (line) => lines.push(line),
    });
    expect(result.applied).toEqual(MIGRATION_IDS);
    expect(lines[0]).toMatch(/resuming at phase \w+ \(\d+ items scanned before, run 2\)/);
    expect(await dataItems(tableName)).toEqual(uninterrupted);
    // Two `npm run migrate` processes start here (tsx compiles the CLI each time): on a busy
    // 2-core machine their start-up alone has taken most of the default 30 s.
  }, 90_000);

  it('by a crash in the middle of a page resumes and ends in the same table', async () => {
    const tableName = await previousReleaseTable(shop);
    const crash = new Error('injected crash');
    let writes = 0;
    await expect(
      migrate({
        client: dynamo.client,
        doc: dynamo.doc,
        tableName,
        afterWrite: () => {
          if (++writes === 37) throw crash;
        },
      }),
    ).rejects.toBe(crash);
    expect(await dataItems(tableName)).not.toEqual(uninterrupted);
    const result = await migrate({ client: dynamo.client, doc: dynamo.doc, tableName });
    expect(result.applied).toEqual(MIGRATION_IDS);
    expect(await dataItems(tableName)).toEqual(uninterrupted);
    const again = await migrate({ client: dynamo.client, doc: dynamo.doc, tableName });
    expect(again.applied).toEqual([]);
  });
});

function spawnMigrate(env: Record<string, string>, args: string[]) {
  return runNode('scripts/migrate.ts', env, args);
}

function waitForOutput(run: ReturnType<typeof runNode>, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (pattern.test(run.stdout())) resolve();
    };
    run.child.stdout?.on('data', check);
    void run.exited.then(() => reject(new Error(`exited before printing ${pattern}: ${run.stdout()}${run.stderr()}`)));
    check();
  });
}

describe('a server in front of a table with migrations pending (aws mode)', () => {
  it('refuses the fields that need them with MIGRATION_PENDING naming npm run migrate, and serves the rest', async () => {
    const server = await startTestServer({ schema: new SchemaGate(['0001-shop-orders-index']) });
    try {
      const user = aUser();
      await storePreviousRelease(server.dynamo.doc, server.tableName, { users: [user], products: [], orders: [] });
      for (const query of [
        '{ orders { nodes { orderId } } }',
        '{ categories { name } }',
        `{ user(userId: "${user.userId}") { orders(status: PLACED) { totalCount } } }`,
        '{ products { nodes { name } } }',
        '{ products(category: "books", orderBy: { field: PRICE }) { nodes { name } } }',
      ]) {
        const response = await server.gql(query);
        expect(errorCodes(response)).toEqual(['MIGRATION_PENDING']);
        expect(response.errors![0]!.message).toMatch(/npm run migrate/);
      }
      const served = await server.gql(
        `{ products(category: "books", namePrefix: "a", inStock: true, orderBy: { field: NAME, direction: DESC }) { nodes { name } }
           user(userId: "${user.userId}") { orders(status: PLACED) { nodes { orderId } } } }`,
      );
      expect(served.errors).toBeUndefined();
    } finally {
      await server.stop();
    }
  });

  it('logs one line naming npm run migrate at start-up', async () => {
    const tableName = await previousReleaseTable();
    const server = await children.start('', tableName, {
      DYNAMODB_MODE: 'aws',
      DYNAMODB_ENDPOINT: '',
      AWS_ENDPOINT_URL_DYNAMODB: endpoint(),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    const warnings = server.node.logs.filter((line) => /npm run migrate/.test(line.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(
      /needs migration 0001-shop-orders-index, 0002-product-indexes: run npm run migrate/,
    );
    // Nothing was migrated: that is the operator's step in aws mode.
    expect((await scanTable(dynamo.doc, tableName)).some((item) => item.entityType === EntityType.Category)).toBe(
      false,
    );
  });
});
