/**
 * The benchmark's dataset: deterministic (seeded PRNG), sized by BenchConfig, written with the
 * project's own codecs (so items have exactly the server's layout) and BatchWriteItem.
 *
 * - `users` users with 21-40 orders each (both copies of every order: details + user partition);
 * - `categories` x `productsPerCategory` products with realistic text sizes and deep stock
 *   (placeOrder runs never run out);
 * - `buyers` users without orders, the only ones placeOrder writes to;
 * - one user (`bench-scale`) with `scaleOrders` orders for the scale test.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putItems } from '../src/db/batchWrite.js';
import { EntityType, orderToDetailsItem, orderToUserItem, productToItem, userToItem } from '../src/table/codecs.js';
import type { Item } from '../src/table/codecs.js';
import { seededRandom } from '../src/seed/seededRandom.js';
import { emailGuardKey } from '../src/table/keys.js';
import type { OrderModel, OrderStatus, ProductModel, UserModel } from '../src/table/models.js';
import type { BenchConfig } from './config.js';

export const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;

/** `count` distinct elements of `list` (count <= list.length). */
export function pickDistinct<T>(random: () => number, list: readonly T[], count: number): T[] {
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(random() * list.length));
  return [...chosen].map((index) => list[index] as T);
}

const WORDS =
  'solid compact wireless durable premium classic ergonomic quiet portable smart steel cotton bamboo ceramic modular foldable insulated rechargeable waterproof lightweight'.split(
    ' ',
  );
const NOUNS =
  'lamp kettle backpack speaker notebook jacket blender tent mug charger router chair desk pan bottle'.split(' ');

export const SCALE_USER_ID = 'bench-scale';
const CREATED_AT = '2025-01-01T08:00:00.000Z';
const NOW_MS = Date.parse('2026-06-01T12:00:00.000Z');
const MINUTE_MS = 60_000;

export interface Dataset {
  users: UserModel[];
  buyers: UserModel[];
  products: ProductModel[];
  categories: string[];
  /** Orders of `users` (not the scale user's). */
  orders: OrderModel[];
  scaleUser: UserModel | undefined;
}

export interface SeedReport {
  items: number;
  seconds: number;
  itemsPerSecond: number;
  /** Items by kind, for the report. */
  breakdown: Record<string, number>;
}

function user(userId: string, orderCount: number): UserModel {
  return {
    kind: 'User',
    userId,
    email: `${userId}@bench.example.com`,
    name: `Bench User ${userId.slice(-4)}`,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    orderCount,
    // The benchmark reads no per-status counts; the writes add them as orders come.
    statusCounts: null,
    version: 1,
  };
}

function statusFor(age: number, random: () => number): OrderStatus {
  if (age <= 2) return 'PLACED';
  if (age <= 5) return 'SHIPPED';
  return random() < 0.1 ? 'CANCELLED' : 'DELIVERED';
}

/** `count` orders of `userId`, newest at `NOW_MS - age * spacingMs`. */
function makeOrders(
  userId: string,
  count: number,
  spacingMs: number,
  random: () => number,
  products: readonly ProductModel[],
): OrderModel[] {
  const orders: OrderModel[] = [];
  for (let i = 0; i < count; i++) {
    const age = count - i;
    const placedMs = NOW_MS - age * spacingMs - Math.floor(random() * (spacingMs / 2));
    const placedAt = new Date(placedMs).toISOString();
    const lines = pickDistinct(random, products, 1 + Math.floor(random() * 3)).map((product) => ({
      productId: product.productId,
      productName: product.name,
      unitPriceCents: product.priceCents,
      quantity: 1 + Math.floor(random() * 3),
    }));
    const status = statusFor(age, random);
    orders.push({
      kind: 'Order',
      orderId: `${userId}-o${String(i + 1).padStart(6, '0')}`,
      userId,
      status,
      placedAt,
      updatedAt: status === 'PLACED' ? placedAt : new Date(placedMs + 36 * 3_600_000).toISOString(),
      items: lines,
      totalCents: lines.reduce((sum, line) => sum + line.unitPriceCents * line.quantity, 0),
      version: status === 'PLACED' ? 1 : 2,
    });
  }
  return orders;
}

export function buildDataset(config: BenchConfig): Dataset {
  const random = seededRandom(config.seed);
  const categories = Array.from({ length: config.categories }, (_, i) => `cat-${String(i + 1).padStart(2, '0')}`);
  const products: ProductModel[] = [];
  for (const category of categories) {
    for (let i = 0; i < config.productsPerCategory; i++) {
      const name = `${pick(random, WORDS)} ${pick(random, WORDS)} ${pick(random, NOUNS)} ${i + 1}`;
      const sentences = 1 + Math.floor(random() * 4);
      const description = Array.from(
        { length: sentences },
        () =>
          `A ${pick(random, WORDS)}, ${pick(random, WORDS)} ${pick(random, NOUNS)} for every day; ${pick(random, WORDS)} and ${pick(random, WORDS)}.`,
      ).join(' ');
      products.push({
        kind: 'Product',
        productId: `${category}-p${String(i + 1).padStart(4, '0')}`,
        name: name.charAt(0).toUpperCase() + name.slice(1),
        description,
        category,
        priceCents: 199 + Math.floor(random() * 50_000),
        stock: 900_000 + Math.floor(random() * 100_000),
        soldCount: 0,
        createdAt: CREATED_AT,
        updatedAt: CREATED_AT,
        version: 1,
      });
    }
  }
  const users: UserModel[] = [];
  const orders: OrderModel[] = [];
  for (let i = 0; i < config.users; i++) {
    const count = config.ordersMin + Math.floor(random() * (config.ordersMax - config.ordersMin + 1));
    const u = user(`bench-u${String(i + 1).padStart(5, '0')}`, count);
    users.push(u);
    orders.push(...makeOrders(u.userId, count, 3 * 24 * 60 * MINUTE_MS, random, products));
  }
  const buyers = Array.from({ length: config.buyers }, (_, i) =>
    user(`bench-buyer${String(i + 1).padStart(3, '0')}`, 0),
  );
  const scaleUser = config.scaleOrders > 0 ? user(SCALE_USER_ID, config.scaleOrders) : undefined;
  return { users, buyers, products, categories, orders, scaleUser };
}

const userItems = (u: UserModel): Item[] => [
  userToItem(u),
  { ...emailGuardKey(u.email), entityType: EntityType.EmailGuard, userId: u.userId },
];

/** Writes `items` in `streams` parallel BatchWriteItem streams (DynamoDB Local takes ~1,000-1,400 items/s). */
async function writeAll(doc: DynamoDBDocumentClient, tableName: string, items: Item[], streams = 2): Promise<void> {
  const per = Math.ceil(items.length / streams);
  await Promise.all(
    Array.from({ length: streams }, (_, s) => putItems(doc, tableName, items.slice(s * per, (s + 1) * per))),
  );
}

/** Writes the dataset; the scale partition's orders are generated and written in slices to bound memory. */
export async function seedDataset(
  doc: DynamoDBDocumentClient,
  tableName: string,
  data: Dataset,
  config: BenchConfig,
  progress: (message: string) => void,
): Promise<SeedReport> {
  const started = performance.now();
  const breakdown: Record<string, number> = {};
  const count = (kind: string, n: number) => {
    breakdown[kind] = (breakdown[kind] ?? 0) + n;
  };
  const base: Item[] = [
    ...[...data.users, ...data.buyers].flatMap(userItems),
    ...data.products.map(productToItem),
    ...data.orders.flatMap((order) => [orderToDetailsItem(order), orderToUserItem(order)]),
  ];
  count('user profiles + email guards', (data.users.length + data.buyers.length) * 2);
  count('products', data.products.length);
  count('orders (details + user-partition copy)', data.orders.length * 2);
  await writeAll(doc, tableName, base);
  progress(`  base dataset: ${base.length} items in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  if (data.scaleUser) {
    const scaleStarted = performance.now();
    await writeAll(doc, tableName, userItems(data.scaleUser));
    count('user profiles + email guards', 2);
    const random = seededRandom(config.seed + 1);
    const slice = 5000;
    for (let done = 0; done < config.scaleOrders; done += slice) {
      const n = Math.min(slice, config.scaleOrders - done);
      // One order a minute, oldest first; ids continue across slices.
      const orders = makeOrders(SCALE_USER_ID, n, MINUTE_MS, random, data.products).map((order, i) => ({
        ...order,
        orderId: `${SCALE_USER_ID}-o${String(done + i + 1).padStart(6, '0')}`,
        placedAt: new Date(NOW_MS - (config.scaleOrders - done - i) * MINUTE_MS).toISOString(),
        updatedAt: new Date(NOW_MS - (config.scaleOrders - done - i) * MINUTE_MS).toISOString(),
      }));
      const items = orders.flatMap((order) =>
        config.scaleDetails ? [orderToUserItem(order), orderToDetailsItem(order)] : [orderToUserItem(order)],
      );
      await writeAll(doc, tableName, items);
      count(config.scaleDetails ? 'scale orders (both copies)' : 'scale orders (user-partition copy)', items.length);
      progress(
        `  scale partition: ${done + n}/${config.scaleOrders} orders (${((performance.now() - scaleStarted) / 1000).toFixed(1)} s)`,
      );
    }
  }
  const items = Object.values(breakdown).reduce((a, b) => a + b, 0);
  const seconds = (performance.now() - started) / 1000;
  return { items, seconds, itemsPerSecond: items / seconds, breakdown };
}
